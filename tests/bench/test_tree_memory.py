"""bench.tree_memory: a row per position, a full tree reported as full,
and bad arguments refused."""

from __future__ import annotations

import re

from bench import tree_memory


def test_rows_and_a_full_tree(capsys) -> None:
    assert tree_memory.main(["--rollouts", "2000", "--max-memory", "1M"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "19x19, 2,000 simulations, 1 thread(s), cap 1M, no network"
    rows = [line.split(" | ") for line in lines[3:]]
    assert [r[0] for r in rows] == ["| empty board", "| move 120"]
    for r in rows:
        assert r[1] == "2,000" and r[5] == "yes"        # 36,157 edges: full in 550 or so
        edges = int(r[4].replace(",", ""))
        assert 32_000 < edges <= 36_157
        assert re.fullmatch(r"[\d,]+ B", r[6]) and re.fullmatch(r"[\d,]+ B", r[7])


def test_bad_arguments_exit_2(capsys) -> None:
    assert tree_memory.main(["--rollouts", "0"]) == 2
    assert tree_memory.main(["--max-memory", "lots"]) == 2
    assert "--max-memory: not a size" in capsys.readouterr().err
