"""bench.marathon on a tiny run: games in one process, the memory and time
summary, and the replay of the last game in a fresh process."""

from __future__ import annotations

import re
import sys

from bench import marathon


def test_three_games_in_one_process(capsys, tmp_path) -> None:
    engine = f"{sys.executable} -m engine.gtp --quiet --rollouts 50 --seed 3 --network none"
    out = tmp_path / "games.json"
    code = marathon.main(["--games", "3", "--every", "3", "--size", "7", "--engine", engine,
                          "--json", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    lines = text.splitlines()
    assert re.match(r"started delayed-go \(pid \d+\)", lines[1])
    assert re.match(r"\s+3\s+[\d.]+\s+[\d.]+\s+[\d.]+  ([BW]\+[\dR.]+ ?){3}$", lines[3]), lines[3]
    assert "flat (within 10%)" in text
    assert "played into a fresh process gives the same board" in text
    import json
    record = json.loads(out.read_text())
    assert len(record["games"]) == 3 and record["replay_same"] is True


def test_bad_arguments_exit_2(capsys) -> None:
    import pytest
    with pytest.raises(SystemExit) as e:
        marathon.main(["--games", "0"])
    assert e.value.code == 2
