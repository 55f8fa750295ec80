"""bench.compare: two match folders' counts and Fisher's exact test between
them, from bench.match's game records, and the errors that exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import compare
from bench.stats import fisher_exact


def match_folder(tmp_path: Path, name: str, games: list[tuple]) -> Path:
    """A bench.match folder of (engine_won, end, moves) records."""
    folder = tmp_path / name
    folder.mkdir()
    for i, (won, end, moves) in enumerate(games, 1):
        (folder / f"game-{i:03d}.json").write_text(json.dumps(
            {"game": i, "engine_color": "W", "engine_won": won, "end": end, "moves": moves,
             "seconds": 60.0, "error": None}))
    (folder / "game-009.partial.json").write_text("{}")       # a game in play: not counted
    return folder


def test_two_arms_side_by_side(tmp_path, capsys) -> None:
    a = match_folder(tmp_path, "dyn", [(True, "two passes", 250), (True, "resignation", 180),
                                       (False, "resignation", 230), (None, "two passes", 300)])
    b = match_folder(tmp_path, "none", [(False, "resignation", 68), (False, "resignation", 150),
                                        (True, "two passes", 280), (False, "forfeit", 20),
                                        (True, "referee error", 99)])
    out = tmp_path / "c.json"
    assert compare.main([str(a), str(b), "--json", str(out)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{a}: 2 of 4 won, 1 drawn, 62.5% (21.9-90.8%)",
        "  ended by: resignation 2, two passes 2",
        "  the engine resigned at moves: 230 (0 before move 100)",
        f"{b}: 1 of 4 won, 25.0% (4.6-69.9%)",
        "  ended by: forfeit 1, resignation 2, two passes 1",
        "  the engine resigned at moves: 68, 150 (1 before move 100)",
        f"Fisher's exact test, {a} (2/4) against {b} (1/4): p = 0.500 one-sided "
        "(the first wins more), 1.000 two-sided",
    ]
    saved = json.loads(out.read_text())
    assert saved["folders"][str(b)]["engine_resigned_at"] == [68, 150]
    assert saved["fisher_against_first"][str(b)] == {"one_sided": 0.5, "two_sided": 1.0}


def test_fisher_exact_gives_the_p_values_of_docs_handicap() -> None:
    assert [round(p, 3) for p in fisher_exact(17, 20, 12, 20)] == [0.078, 0.155]
    assert [round(p, 3) for p in fisher_exact(12, 20, 0, 5)] == [0.024, 0.039]
    assert [round(p, 3) for p in fisher_exact(0, 5, 12, 20)] == [1.0, 0.039]
    assert fisher_exact(3, 3, 0, 3) == pytest.approx((0.05, 0.1))
    with pytest.raises(ValueError):
        fisher_exact(4, 3, 0, 3)


def test_what_gives_no_count_exits_2(tmp_path, capsys) -> None:
    a = match_folder(tmp_path, "a", [(True, "two passes", 250)])
    empty = tmp_path / "empty"
    empty.mkdir()
    assert compare.main([str(a), str(tmp_path / "missing")]) == 2
    assert "missing: no such folder" in capsys.readouterr().err
    assert compare.main([str(a), str(empty)]) == 2
    assert "no game-NNN.json records" in capsys.readouterr().err
    (empty / "game-001.json").write_text("{not json")
    assert compare.main([str(a), str(empty)]) == 2
    assert "game-001.json: not a bench.match game record" in capsys.readouterr().err
    (empty / "game-001.json").write_text(
        '{"game": 1, "engine_color": "W", "engine_won": true, "seconds": 1, "error": null}')
    assert compare.main([str(a), str(empty)]) == 2
    assert "game-001.json: not a bench.match game record (no end, moves)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        compare.main([str(a)])
    assert exit_.value.code == 2
