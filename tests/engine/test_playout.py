"""The rollout policy's tactical readers (engine/playout.py): the ladder,
escaping atari by capturing, and ataris that capture.  Positions in, the
reader's verdict out."""

from __future__ import annotations

from engine.board import BLACK, PASS, WHITE, ZOBRIST, Board
from engine.playout import PlayoutScratch, atari_captures, escape_fails, save_move

# Black D4 is in atari at D3 (white C4 D5 E4 E3); running out to D3 leaves
# two liberties, and white's ataris from the far side drive the chain
# towards the corner A1, where it dies.
LADDER = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . O . . . . .
    . . O X O . . . .
    . . . . O . . . .
    . . . . . . . . .
    . . . . . . . . .
"""

# The same with a black stone on B2, in the ladder's path: it breaks it.
BROKEN = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . O . . . . .
    . . O X O . . . .
    . . . . O . . . .
    . X . . . . . . .
    . . . . . . . . .
"""

# Black D4 has two liberties, D3 and E4 (white C4 D5 E3): white E4 starts
# the ladder of LADDER.
TWO_LIBS = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . O . . . . .
    . . O X . . . . .
    . . . . O . . . .
    . . . . . . . . .
    . . . . . . . . .
"""

# Black D4 is in atari at D3, and the white stone C4 next to it is in atari
# at C5: capturing it saves D4.
COUNTER = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . O . . . . .
    . X O X O . . . .
    . . X . O . . . .
    . . . . . . . . .
    . . . . . . . . .
"""


def _scratch():
    return PlayoutScratch(Board(9).b.shape[1])


def test_running_into_a_ladder_fails():
    board = Board.from_ascii(LADDER, BLACK)
    ps = _scratch()
    before = board.b.copy()
    assert escape_fails(board.b, board.s, ZOBRIST, board.at("D4"), ps.lb, ps.ls)
    assert (board.b == before).all()          # the reader plays on its own board
    assert save_move(board.b, board.s, ZOBRIST, board.b[1, board.at("D4")], BLACK, True,
                     ps.lb, ps.ls) == PASS
    # without the reader the policy still runs out (two liberties)
    assert save_move(board.b, board.s, ZOBRIST, board.b[1, board.at("D4")], BLACK, False,
                     ps.lb, ps.ls) == board.at("D3")


def test_a_ladder_breaker_saves_the_chain():
    board = Board.from_ascii(BROKEN, BLACK)
    ps = _scratch()
    assert not escape_fails(board.b, board.s, ZOBRIST, board.at("D4"), ps.lb, ps.ls)
    assert save_move(board.b, board.s, ZOBRIST, board.b[1, board.at("D4")], BLACK, True,
                     ps.lb, ps.ls) == board.at("D3")


def test_atari_that_starts_a_working_ladder_captures():
    board = Board.from_ascii(TWO_LIBS, WHITE)
    ps = _scratch()
    d4 = board.at("D4")
    assert atari_captures(board.b, board.s, ZOBRIST, board.at("E4"), WHITE, d4, ps.lb, ps.ls)
    broken = Board.from_ascii(TWO_LIBS, WHITE)
    broken.place(broken.at("B2"), BLACK)
    assert not atari_captures(broken.b, broken.s, ZOBRIST, broken.at("E4"), WHITE, d4,
                              ps.lb, ps.ls)
    # an atari from the other side runs the ladder to the upper right: a
    # black stone on G7 breaks it
    assert atari_captures(board.b, board.s, ZOBRIST, board.at("D3"), WHITE, d4, ps.lb, ps.ls)
    board.place(board.at("G7"), BLACK)
    assert not atari_captures(board.b, board.s, ZOBRIST, board.at("D3"), WHITE, d4,
                              ps.lb, ps.ls)


def test_escape_by_capturing_the_ladder_stone():
    board = Board.from_ascii(COUNTER, BLACK)
    ps = _scratch()
    move = save_move(board.b, board.s, ZOBRIST, board.b[1, board.at("D4")], BLACK, True,
                     ps.lb, ps.ls)
    assert board.name(move) == "C5"


