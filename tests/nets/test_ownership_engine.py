"""The engine with the shipped ownership network (nets/weights/res6own.pt,
or the one $OWNERSHIP_WEIGHTS names), 9x9 positions in ASCII: what
final_status_list and final_score answer."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("torch")

from engine.config import EngineConfig  # noqa: E402
from engine.player import Player  # noqa: E402
from nets.evaluator import DEFAULT_OWNERSHIP, OwnershipEvaluator  # noqa: E402

#: another checkpoint to test instead of the shipped one
WEIGHTS = os.environ.get("OWNERSHIP_WEIGHTS", str(DEFAULT_OWNERSHIP))


@pytest.fixture(scope="module")
def network():
    return OwnershipEvaluator(WEIGHTS, device="cpu", threads=1)


def player_with(diagram: str, network, seed: int = 1) -> Player:
    player = Player(EngineConfig(board_size=9, komi=7.5, seed=seed, rollouts=3000),
                    ownership=network)
    rows = [r.split() for r in diagram.strip().splitlines()]
    for i, row in enumerate(rows):
        for col, ch in enumerate(row):
            if ch in "XO":
                player.play("b" if ch == "X" else "w", (col, 8 - i))
    return player


def names(player: Player, status: str) -> list[str]:
    board = player.game.board
    return sorted(board.name(board.point(*v)) for v in player.final_status_list(status))


# the lone stones B5 and H5 in three and four empty columns of the other
# colour's area: the playouts alone leave them undecided (tests/engine/
# test_player.py counts W+7.5 without the network)
FINISHED_OPEN = """
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . O . X O . . X .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
"""

SEKI = """
    . . X O . X O . .
    . . X O . X O . .
    . . X O X X O . .
    . . X X O O O . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
"""

# a black group in White's corner: two eyes (H9, J8) ...
TWO_EYES = """
    . . . X O O X . X
    . . . X O O X X .
    . . . X O O X X X
    . . . X O O O O O
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
"""
# ... and one eye of two points (H9, J9)
ONE_EYE = TWO_EYES.replace(". . . X O O X . X\n    . . . X O O X X .",
                           ". . . X O O X . .\n    . . . X O O X X X", 1)
CORNER = ["G7", "G8", "G9", "H7", "H8", "J7"]


@pytest.mark.parametrize("seed", [1, 2])
def test_dead_stones_in_open_territories(network, seed):
    player = player_with(FINISHED_OPEN, network, seed)
    assert names(player, "dead") == ["B5", "H5"]
    assert player.final_score() == "W+16.5"


@pytest.mark.parametrize("seed", [1, 2])
def test_seki(network, seed):
    player = player_with(SEKI, network, seed)
    assert names(player, "seki") == ["D7", "D8", "D9", "E7", "F7", "F8", "F9"]
    assert names(player, "dead") == []
    assert player.final_score() == "W+12.5"


@pytest.mark.parametrize("seed", [1, 2])
def test_corner_group_with_two_eyes_lives(network, seed):
    player = player_with(TWO_EYES, network, seed)
    assert names(player, "dead") == []
    assert set(CORNER + ["J9"]) <= set(names(player, "alive"))


@pytest.mark.parametrize("seed", [1, 2])
def test_group_with_one_eye_dies(network, seed):
    assert ONE_EYE != TWO_EYES
    player = player_with(ONE_EYE, network, seed)
    assert names(player, "dead") == sorted(CORNER + ["J8"])
