"""bench.ownership_labels: the label of a finished position (dead stones
turned into the capturer's, then area), and a real labelling run with GNU
Go where it is installed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import numpy as np

from bench.ownership_labels import main, net_label, net_lead, owner_map, territory_score
from engine.board import BLACK, WHITE, Board

ROOT = Path(__file__).resolve().parents[2]
GNUGO = shutil.which("gnugo") or ("/usr/games/gnugo" if Path("/usr/games/gnugo").exists() else None)


def _diagram(own, n: int) -> str:
    return "\n".join(" ".join({1: "X", -1: "O", 0: "."}[int(v)] for v in own[i * n:(i + 1) * n])
                     for i in range(n))


def test_dead_stones_become_the_capturers_and_dame_belongs_to_neither() -> None:
    board = Board.from_ascii("""
        . X . X O . .
        X X X X O . .
        . O . X O O O
        X X X X O . .
        . . . X O . O
        X X X . O O .
        . . X X O . .
    """)
    assert _diagram(owner_map(board, [board.at("B5")]), 7) == """\
X X X X O O O
X X X X O O O
X X X X O O O
X X X X O O O
X X X X O O O
X X X . O O O
X X X X O O O"""


def test_seki_liberties_belong_to_neither() -> None:
    # two eyeless groups share the liberties E5 and E3: a seki, no stone dead
    board = Board.from_ascii("""
        . . X O . . .
        . . X O . . .
        X X X O O O O
        O O O X . X X
        X X X O O O O
        O O O X . X X
        . . O X . . .
    """)
    own = owner_map(board, [])
    assert own[3 * 7 + 4] == 0 and own[5 * 7 + 4] == 0
    assert own[0] == 1 and own[6] == -1


def _walls_game(result: str, rules: str = "Japanese") -> str:
    """9x9: Black walls off columns A-D, White E-J; White's B3 invades and
    is left dead; two passes.  Japanese count: W+15.5 at komi 7.5."""
    moves = []
    for r in "abcdefghi":
        moves += [f";B[d{r}]", f";W[e{r}]"]
    moves += [";B[]", ";W[bg]", ";B[]", ";W[]"]
    return f"(;GM[1]FF[4]SZ[9]KM[7.5]RU[{rules}]RE[{result}]" + "".join(moves) + ")"


class _WallsOwner:
    """An ownership network's stand-in: columns A-D Black's, E-J White's
    (the probability that the player to move owns each point)."""

    path = "walls.pt"

    def evaluate(self, planes, colors):
        black = np.tile([1.0] * 4 + [0.0] * 5, 9)
        return (black if colors[0] == BLACK else 1.0 - black)[None, :]


@pytest.mark.parametrize("result, rules, score, agrees", [
    ("W+15.5", "Japanese", -15.5, True),    # territory 27 + 1 prisoner against 36 + 7.5 komi
    ("W+14.5", "Japanese", -15.5, True),    # a point off the record: still agrees
    ("W+17.5", "Japanese", -15.5, False),   # two points off: left out
    ("W+16.5", "Chinese", -16.5, True),     # area 36 against 45
    ("B+0.5", "Chinese", -16.5, False),
])
def test_a_network_label_must_come_within_a_point_of_the_record(tmp_path, result, rules, score,
                                                                agrees) -> None:
    path = tmp_path / "g.sgf"
    path.write_text(_walls_game(result, rules=rules))
    d = net_label(_WallsOwner(), path, "g.sgf")
    assert d["dead"] == ["B3"] and d["score"] == score and d["by"] == "walls.pt"
    assert d["agrees"] == agrees and ("why" in d) != agrees
    assert d["owner"] == ("X" * 4 + "O" * 5) * 9


@pytest.mark.parametrize("result, agrees", [("W+R", True), ("W+Resign", True),
                                            ("B+R", False), ("W+15.5", None)])
def test_a_resigned_games_lead_is_the_networks_expected_area(tmp_path, result, agrees) -> None:
    """--leads: Black's expected area lead before komi, 36 - 45 points;
    at komi 7.5 it favours White; counted games are not resigned ones."""
    path = tmp_path / "g.sgf"
    path.write_text(_walls_game(result))
    d = net_lead(_WallsOwner(), path, "g.sgf")
    if agrees is None:
        assert d is None
        return
    assert d["lead"] == -9.0 and d["komi"] == 7.5 and d["result"] == result[0] + "+R"
    assert d["agrees"] == agrees and ("why" in d) != agrees and "owner" not in d


def test_the_territory_count_takes_prisoners_and_dead_stones() -> None:
    """Black's area A-C, White's D-E; White's B4 dead in Black's area;
    Black took 2 prisoners in the game and White 1: Black's territory 9
    empty points + the dead stone's, prisoners 2 + 1 dead, against White's
    5 points + 1 prisoner, komi 0.5."""
    board = Board.from_ascii("""
        . . X O .
        . O X O .
        . . X O .
        . . X O .
        . . X O .
    """)
    own = np.tile([1, 1, 1, -1, -1], 5)
    score = territory_score(board, own, [board.at("B4")], {BLACK: 2, WHITE: 1}, 0.5)
    assert score == (9 + 1 + 2 + 1) - (5 + 1) - 0.5


@pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed")
def test_a_counted_game_is_labelled_and_a_rerun_skips_it(tmp_path) -> None:
    games = tmp_path / "games"
    games.mkdir()
    (games / "counted.sgf").write_text(_walls_game("W+15.5"))
    (games / "resigned.sgf").write_text(_walls_game("W+R"))
    (games / "wrong.sgf").write_text(_walls_game("B+3.5"))
    out = tmp_path / "labels.jsonl"
    assert main([str(games), str(out), "--gnugo", f"{GNUGO} --mode gtp --level 1"]) == 0
    lines = {d["source"]: d for d in map(json.loads, out.read_text().splitlines())}
    assert sorted(lines) == ["counted.sgf", "wrong.sgf"]
    d = lines["counted.sgf"]
    assert d["agrees"] and d["dead"] == ["B3"] and d["score"] == -15.5
    assert d["owner"] == ("X" * 4 + "O" * 5) * 9
    assert not lines["wrong.sgf"]["agrees"] and "B+3.5" in lines["wrong.sgf"]["why"]
    assert main([str(games), str(out), "--gnugo", f"{GNUGO} --mode gtp --level 1"]) == 0
    assert out.read_text().count("\n") == 2


def test_errors_exit_2(tmp_path, capsys) -> None:
    assert main([str(tmp_path / "none"), str(tmp_path / "o.jsonl")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert main([str(tmp_path), str(tmp_path / "o.jsonl")]) == 2
    assert "no SGF files" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main([str(tmp_path), str(tmp_path / "o.jsonl"), "--leads"])
    assert e.value.code == 2
    assert "--leads needs --net" in capsys.readouterr().err
