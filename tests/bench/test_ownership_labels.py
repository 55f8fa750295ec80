"""bench.ownership_labels: the label of a finished position (dead stones
turned into the capturer's, then area), and a real labelling run with GNU
Go where it is installed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.ownership_labels import main, owner_map
from engine.board import Board

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


def _walls_game(result: str) -> str:
    """9x9: Black walls off columns A-D, White E-J; White's B3 invades and
    is left dead; two passes.  Japanese count: W+15.5 at komi 7.5."""
    moves = []
    for r in "abcdefghi":
        moves += [f";B[d{r}]", f";W[e{r}]"]
    moves += [";B[]", ";W[bg]", ";B[]", ";W[]"]
    return f"(;GM[1]FF[4]SZ[9]KM[7.5]RU[Japanese]RE[{result}]" + "".join(moves) + ")"


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
