"""bench.tree_memory: a row per position, a full tree reported as full,
and bad arguments refused."""

from __future__ import annotations

import re

from bench import tree_memory


def test_rows_and_a_full_tree(capsys) -> None:
    assert tree_memory.main(["--rollouts", "5000", "--max-memory", "1M"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "19x19, 5,000 simulations, 1 thread(s), cap 1M, no network"
    rows = [line.split(" | ") for line in lines[3:]]
    assert [r[0] for r in rows] == ["| empty board", "| move 120"]
    for r in rows:
        assert r[1] == "5,000" and r[5] == "yes"        # 36,157 edges: full in 2,500 or so
        edges = int(r[4].replace(",", ""))
        assert 32_000 < edges <= 36_157
        assert re.fullmatch(r"[\d,]+ B", r[6]) and re.fullmatch(r"[\d,]+ B", r[7])


def test_a_search_constant_fewer_edges(capsys) -> None:
    """Expanding at the eighth visit instead of the second: fewer edges for
    the same simulations, and the header says which constant was set."""
    edges = {}
    for n in (2, 8):
        assert tree_memory.main(["--rollouts", "3000", "--param", f"expand_visits={n}"]) == 0
        lines = capsys.readouterr().out.strip().splitlines()
        assert lines[0] == (f"19x19, 3,000 simulations, 1 thread(s), cap 2G, no network, "
                            f"expand_visits {n}")
        edges[n] = int(lines[3].split(" | ")[4].replace(",", ""))
    assert edges[8] < edges[2] / 2, edges


def test_bad_arguments_exit_2(capsys) -> None:
    assert tree_memory.main(["--rollouts", "0"]) == 2
    assert tree_memory.main(["--max-memory", "lots"]) == 2
    assert "--max-memory: not a size" in capsys.readouterr().err
    assert tree_memory.main(["--param", "expand_visits=lots"]) == 2
    assert tree_memory.main(["--param", "no_such=1"]) == 2
    assert "--param 'expand_visits=lots': 'lots' is not an integer" in capsys.readouterr().err
