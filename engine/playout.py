"""Random playouts to the end of the game.

``light_playout`` is the uniform random policy of the classic Monte-Carlo
players: every legal move except filling one's own single-point eye, chosen
uniformly, until both sides pass.  It plays on the board it is given, so the
caller hands it a scratch copy.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.board import (BLACK, COLOR, EMPTIES, EMPTY, HEAD, LIBS, MARK, PASS,
                          S_LAST, S_NEMPTY, S_PASSES, S_TO_MOVE, S_W, SIZE,
                          WHITE, chain_liberty, is_eyeish, is_legal,
                          libs_after, new_stamp, play, rng_below, rng_next)
from engine.patterns import pattern_code


@njit(nogil=True, cache=True)
def random_move(b, s, rng, c, sa_limit):
    """A uniformly chosen legal move for c that fills no own eye, or PASS;
    with ``sa_limit`` > 0 also none that leaves ``sa_limit`` or more own
    stones in atari.

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
        if (not is_eyeish(b, s, p, c) and is_legal(b, s, p, c)
                and (sa_limit == 0 or self_atari_size(b, s, p, c) < sa_limit)):
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
        p = random_move(b, s, rng, c, 0)
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


@njit(nogil=True, cache=True)
def rng_unit(rng):
    """Uniform float in [0, 1)."""
    return (rng_next(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(nogil=True, cache=True)
def self_atari_size(b, s, p, c):
    """Stones c would leave in atari by playing p (0 if the move is safe).
    Cheap when p has two or more empty neighbours, the common case."""
    w = s[S_W]
    empties = 0
    for d in (-w, -1, 1, w):
        if b[COLOR, p + d] == EMPTY:
            empties += 1
    if empties >= 2 or libs_after(b, s, p, c) >= 2:
        return 0
    size = 1
    st = new_stamp(b, s)
    for d in (-w, -1, 1, w):
        q = p + d
        if b[COLOR, q] == c:
            h = b[HEAD, q]
            if b[MARK, h] != st:
                b[MARK, h] = st
                size += b[SIZE, h]
    return size


@njit(nogil=True, cache=True)
def policy_move(b, s, rng, c, gammas, mass, sa_limit, cand, wts):
    """The rollout policy: (1) capture a chain next to the last move that is
    in atari, (2) save an own chain the last move put in atari, (3) a 3x3
    pattern move around the last move, sampled with probability
    gamma / (sum of gammas + mass), (4) a random move that fills no own eye
    and puts no chain of ``sa_limit`` or more stones in atari.
    ``cand``/``wts`` are 8-long scratch arrays of the calling thread."""
    last = s[S_LAST]
    w = s[S_W]
    o = 3 - c
    if last != PASS and b[COLOR, last] == o:
        for d in (0, -w, -1, 1, w):
            q = last + d
            if b[COLOR, q] == o and b[LIBS, b[HEAD, q]] == 1:
                lib = chain_liberty(b, s, b[HEAD, q])
                if is_legal(b, s, lib, c):
                    return lib
        for d in (-w, -1, 1, w):
            q = last + d
            if b[COLOR, q] == c and b[LIBS, b[HEAD, q]] == 1:
                lib = chain_liberty(b, s, b[HEAD, q])
                if is_legal(b, s, lib, c) and libs_after(b, s, lib, c) >= 2:
                    return lib
    if last != PASS:
        n = 0
        total = 0.0
        for d in (-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1):
            p = last + d
            if b[COLOR, p] == EMPTY and not is_eyeish(b, s, p, c) and is_legal(b, s, p, c):
                g = gammas[pattern_code(b, s, p, c)]
                cand[n] = p
                wts[n] = g
                total += g
                n += 1
        if n > 0:
            r = rng_unit(rng) * (total + mass)
            if r < total:
                for i in range(n):
                    r -= wts[i]
                    if r < 0.0 and self_atari_size(b, s, cand[i], c) < sa_limit:
                        return cand[i]
    return random_move(b, s, rng, c, sa_limit)


@njit(nogil=True, cache=True)
def policy_playout(b, s, zob, rng, max_moves, gammas, mass, sa_limit, cand, wts, seq, nseq):
    """Play the rollout policy until two passes or max_moves, appending the
    moves to ``seq`` from index ``nseq`` (for AMAF); returns the new length."""
    for _ in range(max_moves):
        c = s[S_TO_MOVE]
        p = policy_move(b, s, rng, c, gammas, mass, sa_limit, cand, wts)
        play(b, s, zob, p, c)
        if nseq < seq.shape[0]:
            seq[nseq] = p
            nseq += 1
        if s[S_PASSES] >= 2:
            break
    return nseq
