"""Flat Monte-Carlo move choice: a stopgap player until the tree search lands.

Every legal candidate (own single-point eyes excluded) gets the same share of
light random playouts; the move with the best mean result is played.  It is
weak but always legal, which is what the foundation needs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.board import (BLACK, COLOR, EMPTY, PASS, S_W, ZOBRIST, Board,
                          is_eyeish, play)
from engine.playout import light_playout


@njit(nogil=True, cache=True)
def _flat_mc(b0, s0, zob, rng, cands, n, color, komi, b, s, wins):
    w = s0[S_W]
    for k in range(n):
        for i in range(cands.shape[0]):
            b[:, : w * w] = b0[:, : w * w]
            s[:] = s0[:]
            play(b, s, zob, cands[i], color)
            score = light_playout(b, s, zob, rng, 3 * w * w) - komi
            if (score > 0) == (color == BLACK):
                wins[i] += 1


def flat_mc_move(board: Board, color: int, komi: float, playouts: int,
                 rng: np.ndarray) -> tuple[int, float]:
    """(move, winrate) after ``playouts`` playouts spread over the legal
    candidates; PASS when nothing but filling own eyes is left."""
    cands = np.array([p for p in board.points()
                      if board.b[COLOR, p] == EMPTY
                      and not is_eyeish(board.b, board.s, p, color)
                      and board.is_legal(p, color)], np.int32)
    if len(cands) == 0:
        return PASS, 0.5
    per = max(1, playouts // len(cands))
    wins = np.zeros(len(cands), np.int64)
    _flat_mc(board.b, board.s, ZOBRIST, rng, cands, per, color, komi,
             board.b.copy(), board.s.copy(), wins)
    i = int(np.argmax(wins))
    return int(cands[i]), wins[i] / per
