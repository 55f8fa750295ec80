"""bench.pachi_speed: bad arguments are refused with a message; with a local
Pachi named by $PACHI (Debian's ``pachi`` is an arcade game, so PATH is not
searched) a short run writes the table."""

from __future__ import annotations

import json
import os

import pytest

from bench import pachi_speed


def test_a_missing_pachi_is_refused(capsys):
    with pytest.raises(SystemExit) as e:
        pachi_speed.main(["--pachi", "/nonexistent/pachi"])
    assert e.value.code == 2
    assert "--pachi /nonexistent/pachi: not an executable file" in capsys.readouterr().err


def test_a_board_pachi_cannot_play_is_refused(tmp_path, capsys):
    fake = tmp_path / "pachi"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    with pytest.raises(SystemExit) as e:
        pachi_speed.main(["--pachi", str(fake), "--sizes", "9,21"])
    assert e.value.code == 2
    assert "--sizes must be between 2 and 19" in capsys.readouterr().err


def test_an_engine_that_is_not_pachi_is_an_error(tmp_path, capsys):
    fake = tmp_path / "fake-pachi"
    fake.write_text("#!/bin/sh\nwhile read line; do echo '= '; echo; done\n")
    fake.chmod(0o755)
    rc = pachi_speed.main(["--pachi", str(fake), "--seconds", "0.2", "--rounds", "1",
                           "--sizes", "9"])
    assert rc == 1
    assert "no 'games/s' line in Pachi's log" in capsys.readouterr().err


def test_side_by_side_with_a_local_pachi(tmp_path, capsys):
    pachi = os.environ.get("PACHI")
    if not pachi:
        pytest.skip("no Pachi (set PACHI to a binary built from github.com/pasky/pachi)")
    out = tmp_path / "speed.json"
    rc = pachi_speed.main(["--pachi", pachi, "--seconds", "0.3", "--rounds", "1",
                           "--sizes", "9", "--json", str(out)])
    assert rc == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["work"] for r in rows] == list(pachi_speed.WORK)
    assert all(r["ratio"] > 0 for r in rows)
