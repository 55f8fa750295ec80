"""bench.margins: the engine's margins in a match folder by GNU Go's estimate
(a stand-in GNU Go that prints a fixed score per file), the Mann-Whitney
test between folders, and the errors that exit 2."""

from __future__ import annotations

import json
import shutil
import stat
import sys
from pathlib import Path

import pytest

from bench import margins
from bench.stats import mann_whitney

SCORES = {"a/game-001.sgf": "White wins by 31.5 points.",
          "a/game-002.sgf": "Black wins by 10.5 points.",
          "a/game-003.sgf": "White wins by 1.5 points.",
          "b/game-001.sgf": "Black wins by 54.5 points.",
          "b/game-002.sgf": "Black wins by 2.5 points.",
          "c/game-001.sgf": "GNU Go 3.8"}


def fake_gnugo(tmp_path: Path) -> str:
    """A GNU Go that answers ``--score estimate ... -l FILE`` with SCORES."""
    prog = tmp_path / "gnugo"
    prog.write_text(f"""#!{sys.executable}
import sys
args = sys.argv[1:]
assert args[:3] == ["--score", "estimate", "--chinese-rules"], args
path = args[args.index("-l") + 1]
key = "/".join(path.split("/")[-2:])
print("reading", path)
print({SCORES!r}[key])
""")
    prog.chmod(prog.stat().st_mode | stat.S_IEXEC)
    return str(prog)


def match_folder(tmp_path: Path, name: str, colours: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for i, colour in enumerate(colours, 1):
        (folder / f"game-{i:03d}.sgf").write_text("(;GM[1]SZ[19])")
        (folder / f"game-{i:03d}.json").write_text(json.dumps({"engine_color": colour}))
    return folder


def test_margins_of_two_matches_and_their_test(tmp_path, capsys) -> None:
    gnugo = fake_gnugo(tmp_path)
    a = match_folder(tmp_path, "a", "WBW")
    b = match_folder(tmp_path, "b", "WW")
    out = tmp_path / "m.json"
    assert margins.main([str(a), str(b), "--gnugo", gnugo, "--json", str(out)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        str(a),
        "  game-001  engine W  +31.5",
        "  game-002  engine B  +10.5",
        "  game-003  engine W  +1.5",
        "  3 games: mean +14.5, median +10.5",
        str(b),
        "  game-001  engine W  -54.5",
        "  game-002  engine W  -2.5",
        "  2 games: mean -28.5, median -28.5",
        f"Mann-Whitney, {a} against {b}: U = 6, z = +1.73, p = 0.083 (two-sided)",
    ]
    assert [g["margin"] for g in json.loads(out.read_text())[str(b)]] == [-54.5, -2.5]


def test_mann_whitney_counts_ties_as_half() -> None:
    u, z, p = mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert (u, round(z, 3), round(p, 4)) == (0.0, -2.611, 0.009)
    u, z, p = mann_whitney([1, 2, 2, 3], [2, 3, 3, 4])
    assert (u, round(z, 3), round(p, 3)) == (3.0, -1.517, 0.129)


def test_what_gives_no_margin_exits_2(tmp_path, capsys) -> None:
    gnugo = fake_gnugo(tmp_path)
    assert margins.main([str(tmp_path / "missing"), "--gnugo", gnugo]) == 2
    assert "missing: no such folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert margins.main([str(tmp_path / "empty"), "--gnugo", gnugo]) == 2
    assert "no game-*.sgf files" in capsys.readouterr().err
    c = match_folder(tmp_path, "c", "B")
    assert margins.main([str(c), "--gnugo", gnugo]) == 2
    assert "no score: 'GNU Go 3.8'" in capsys.readouterr().err
    (c / "game-001.json").unlink()
    assert margins.main([str(c), "--gnugo", gnugo]) == 2
    assert "game-001.json: the game's record names no engine_color" in capsys.readouterr().err
    a = match_folder(tmp_path, "a", "W")
    assert margins.main([str(a), "--gnugo", str(tmp_path / "no-gnugo")]) == 2
    assert "failed" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("gnugo") is None and not Path(margins.DEFAULT_GNUGO).exists(),
                    reason="GNU Go is not installed")
def test_real_gnugo_scores_a_finished_game(tmp_path, capsys) -> None:
    """A 5x5 board split by two walls, Black's on the B line and White's on
    the C line: GNU Go counts Black (the engine) 10 points, White 15 and
    the komi 0.5: the engine -5.5."""
    folder = tmp_path / "g"
    folder.mkdir()
    moves = "".join(f";B[b{r}];W[c{r}]" for r in "abcde")
    (folder / "game-001.sgf").write_text(f"(;GM[1]FF[4]SZ[5]KM[0.5]RU[Chinese]{moves})")
    (folder / "game-001.json").write_text(json.dumps({"engine_color": "B"}))
    gnugo = shutil.which("gnugo") or margins.DEFAULT_GNUGO
    assert margins.main([str(folder), "--gnugo", gnugo]) == 0
    assert "  game-001  engine B  -5.5" in capsys.readouterr().out
