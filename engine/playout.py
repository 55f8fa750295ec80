"""Random playouts to the end of the game.

``light_playout`` is the uniform random policy of the classic Monte-Carlo
players: every legal move except filling one's own single-point eye, chosen
uniformly, until both sides pass.  It plays on the board it is given, so the
caller hands it a scratch copy.
"""

from __future__ import annotations

from numba import njit

from engine.board import (BLACK, COLOR, EMPTIES, PASS, S_NEMPTY, S_PASSES,
                          S_TO_MOVE, S_W, WHITE, is_eyeish, is_legal, play,
                          rng_below)


@njit(nogil=True, cache=True)
def random_move(b, s, rng, c):
    """A uniformly chosen legal move for c that fills no own eye, or PASS.

    Starts at a random index of the empty-point list and walks it
    circularly, so no candidate list is built."""
    n = s[S_NEMPTY]
    if n == 0:
        return PASS
    start = rng_below(rng, n)
    for i in range(n):
        j = start + i
        if j >= n:
            j -= n
        p = b[EMPTIES, j]
        if not is_eyeish(b, s, p, c) and is_legal(b, s, p, c):
            return p
    return PASS


@njit(nogil=True, cache=True)
def playout_score(b, s):
    """Area score (black minus white) of a finished playout board: stones
    plus empty points whose neighbours are all of one colour.  Exact when
    every empty region is a single point, which is how playouts end."""
    w = s[S_W]
    score = 0
    for i in range(w + 1, w * (w - 1) - 1):
        k = b[COLOR, i]
        if k == BLACK:
            score += 1
        elif k == WHITE:
            score -= 1
        elif k == 0:
            seen = 0
            for d in (-w, -1, 1, w):
                kk = b[COLOR, i + d]
                if kk == BLACK:
                    seen |= 1
                elif kk == WHITE:
                    seen |= 2
            if seen == 1:
                score += 1
            elif seen == 2:
                score -= 1
    return score


@njit(nogil=True, cache=True)
def light_playout(b, s, zob, rng, max_moves):
    """Play random moves on (b, s) until two passes in a row or max_moves;
    return the final area score from black's view (without komi)."""
    for _ in range(max_moves):
        c = s[S_TO_MOVE]
        p = random_move(b, s, rng, c)
        play(b, s, zob, p, c)
        if s[S_PASSES] >= 2:
            break
    return playout_score(b, s)


@njit(nogil=True, cache=True)
def run_light_playouts(b0, s0, zob, rng, n, b, s):
    """n playouts from (b0, s0) on the scratch board (b, s); returns the sum
    of scores (a benchmark and smoke-test driver)."""
    total = 0
    w = s0[S_W]
    for _ in range(n):
        b[:, : w * w] = b0[:, : w * w]
        s[:] = s0[:]
        total += light_playout(b, s, zob, rng, 3 * w * w)
    return total
