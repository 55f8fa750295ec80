"""Playouts to the end of the game.

``light_playout`` is the uniform random policy of the classic Monte-Carlo
players: every legal move except filling one's own single-point eye, chosen
uniformly, until both sides pass.  ``policy_playout`` is the search's
rollout policy (``policy_move``): tactics around the last move first
(captures, escapes from atari, ataris that capture, read by a small ladder
reader on a second scratch board), then 3x3 patterns, then random moves.
Both play on the board they are given, so the caller hands them a scratch
copy.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.board import (BLACK, COLOR, EMPTIES, EMPTY, HEAD, LIBS, MARK, MAX_CHAIN, NEXT, NROWS,
                          NSCALARS, PASS, S_LAST, S_N, S_NEMPTY, S_PASSES, S_STAMP,
                          S_TO_MOVE, S_W, SIZE,
                          WHITE, chain_liberty, copy_board, copy_rows, is_legal,
                          libs_after, new_stamp, other_liberty, play, playable, rng_below, rng_next,
                          two_liberties)
from engine.patterns import code_has_empty_side, code_is_eye, pattern_code


@njit(nogil=True, cache=True, _nrt=False)
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
        if (playable(b, s, p, c)
                and (sa_limit == 0 or not self_atari(b, s, p, c, sa_limit))):
            return p
    return PASS


@njit(nogil=True, cache=True, _nrt=False)
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


@njit(nogil=True, cache=True, _nrt=False)
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


@njit(nogil=True, cache=True, _nrt=False)
def run_light_playouts(b0, s0, zob, rng, n, b, s):
    """n playouts from (b0, s0) on the scratch board (b, s); returns the sum
    of scores (a benchmark and smoke-test driver)."""
    total = 0
    w = s0[S_W]
    for _ in range(n):
        copy_board(b0, s0, b, s)
        total += light_playout(b, s, zob, rng, 3 * w * w)
    return total


@njit(nogil=True, cache=True, _nrt=False)
def rng_unit(rng):
    """Uniform float in [0, 1)."""
    return (rng_next(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(nogil=True, cache=True, _nrt=False)
def self_atari(b, s, p, c, limit):
    """True when c playing p leaves ``limit`` (>= 1) or more own stones in
    atari.  Cheap in the common cases: p has two or more empty neighbours,
    or p and the chains it joins have fewer than ``limit`` stones; only
    then are the liberties after the move counted."""
    w = s[S_W]
    empties = 0
    most = 1                             # stones after the move, or more
    for d in (-w, -1, 1, w):
        q = p + d
        k = b[COLOR, q]
        if k == EMPTY:
            empties += 1
        elif k == c:
            most += b[SIZE, b[HEAD, q]]
    if empties >= 2 or most < limit or libs_after(b, s, p, c) >= 2:
        return False
    size = 1
    st = new_stamp(b, s)
    for d in (-w, -1, 1, w):
        q = p + d
        if b[COLOR, q] == c:
            h = b[HEAD, q]
            if b[MARK, h] != st:
                b[MARK, h] = st
                size += b[SIZE, h]
    return size >= limit


# playout parameter vector (built from SearchConfig by playout_params)
PP_MASS, PP_SA_LIMIT, PP_LADDER, PP_TWO_LIB = range(4)
N_PP = 4


def playout_params(cfg) -> np.ndarray:
    """The rollout policy's settings (a SearchConfig's playout_* fields) as
    the float vector the kernels take."""
    pp = np.zeros(N_PP, np.float64)
    pp[PP_MASS] = cfg.playout_pattern_mass
    pp[PP_SA_LIMIT] = cfg.playout_self_atari
    pp[PP_LADDER] = cfg.playout_ladder
    pp[PP_TWO_LIB] = cfg.playout_two_lib
    return pp


class PlayoutScratch:
    """What one thread's rollouts write besides its board: the pattern
    candidates and the board the ladder reader plays on, allocated once."""

    def __init__(self, max_points: int):
        self.cand = np.zeros(8, np.int64)
        self.wts = np.zeros(8, np.float64)
        self.lb = np.zeros((NROWS, max_points), np.int32)
        self.ls = np.zeros(NSCALARS, np.int64)


@njit(nogil=True, cache=True, _nrt=False)
def counter_capture(b, s, h):
    """The liberty of an opponent chain in atari next to the chain headed
    by h (capturing it gives h a liberty), or PASS."""
    return counter_or_liberty(b, s, h)[0]


@njit(nogil=True, cache=True, _nrt=False)
def counter_or_liberty(b, s, h):
    """(counter_capture(b, s, h), chain_liberty(b, s, h)) in one walk; the
    liberty is only meaningful when there is no counter-capture."""
    w = s[S_W]
    o = 3 - b[COLOR, h]
    lib = PASS
    r = h
    for _ in range(MAX_CHAIN):
        for d in (-w, -1, 1, w):
            q = r + d
            k = b[COLOR, q]
            if k == EMPTY:
                if lib == PASS:
                    lib = q
            elif k == o and b[LIBS, b[HEAD, q]] == 1:
                return chain_liberty(b, s, b[HEAD, q]), lib
        r = b[NEXT, r]
        if r == h:
            break
    return PASS, lib


@njit(nogil=True, cache=True, _nrt=False)
def ladder_captured(lb, ls, zob, stone):
    """Read the ladder on the scratch board (lb, ls), which it plays on: the
    chain of ``stone`` is in atari and its owner is to move.  The defender
    captures a neighbour in atari if it can (escaped) or extends; the
    attacker ataris again from the side that leaves the fewer liberties,
    never with a stone that is itself in atari.  True when the chain dies."""
    d = lb[COLOR, stone]
    a = 3 - d
    for _ in range(4 * ls[S_N]):
        h = lb[HEAD, stone]
        cc, lib = counter_or_liberty(lb, ls, h)
        if cc != PASS:
            return False
        if not is_legal(lb, ls, lib, d):
            return True
        play(lb, ls, zob, lib, d)
        h = lb[HEAD, stone]
        n = lb[LIBS, h]
        if n >= 3:
            return False
        if n <= 1:
            return True
        l1, l2 = two_liberties(lb, ls, h)
        best = PASS
        best_n = 1 << 30
        for k in range(2):
            at = l1 if k == 0 else l2
            esc = l2 if k == 0 else l1
            if is_legal(lb, ls, at, a) and libs_after(lb, ls, at, a) >= 2:
                m = libs_after(lb, ls, esc, d)     # counts ``at`` too, which the attacker fills
                if m < best_n:
                    best_n = m
                    best = at
        if best == PASS:
            return False
        play(lb, ls, zob, best, a)
        if lb[LIBS, lb[HEAD, stone]] != 1:
            return False
    return False


@njit(nogil=True, cache=True, _nrt=False)
def copy_for_reading(b, s, lb, ls):
    """Copy (b, s) to the reader's board (lb, ls) for a ladder read, the
    rows the read looks at only: stones and chains.  The empty-point list
    is not copied (no read looks at it; play keeps its indices in range on
    lb whatever it holds), and lb keeps its own marks, its stamp going on
    above both boards' stamps so that no old mark reads as fresh."""
    stamp = max(ls[S_STAMP], s[S_STAMP])
    copy_rows(b, lb, SIZE + 1, s[S_W] * s[S_W])     # COLOR, HEAD, NEXT, LIBS, SIZE
    for i in range(NSCALARS):
        ls[i] = s[i]
    ls[S_STAMP] = stamp


@njit(nogil=True, cache=True, _nrt=False)
def escape_fails(b, s, zob, stone, lb, ls):
    """The chain of ``stone`` is in atari with its owner to move: True when
    running out (or capturing a neighbour) does not save it from a ladder.
    Reads on (lb, ls); (b, s) is left as it was."""
    copy_for_reading(b, s, lb, ls)
    return ladder_captured(lb, ls, zob, stone)


@njit(nogil=True, cache=True, _nrt=False)
def captures_beside(b, s, p, c, h):
    """True when c playing p captures an opponent chain other than h."""
    w = s[S_W]
    for d in (-w, -1, 1, w):
        q = p + d
        if b[COLOR, q] == 3 - c and b[HEAD, q] != h and b[LIBS, b[HEAD, q]] == 1:
            return True
    return False


@njit(nogil=True, cache=True, _nrt=False)
def atari_captures(b, s, zob, p, c, stone, lb, ls):
    """True when c playing p puts the opponent chain of ``stone`` in an
    atari it cannot escape (a ladder or a net, read as above)."""
    if libs_after(b, s, p, c) < 2:
        return False
    h = b[HEAD, stone]
    run = other_liberty(b, s, h, p)
    if run == PASS:
        return False
    if counter_capture(b, s, h) != PASS:
        return False                     # escapes by capturing
    return atari_holds(b, s, zob, p, run, c, h, lb, ls)


@njit(nogil=True, cache=True, _nrt=False)
def atari_holds(b, s, zob, p, run, c, h, lb, ls):
    """The rest of :func:`atari_captures` once its cheap tests passed: c's
    atari at p leaves the opponent chain headed by h the one liberty
    ``run``, and no neighbour of the chain is in atari.  True when running
    out at ``run`` does not save it."""
    n_run = libs_after(b, s, run, 3 - c)     # counts p, which c then fills
    if n_run >= 4:
        return False                     # runs out to three liberties
    if n_run <= 2 and not captures_beside(b, s, p, c, h):
        return True                      # running out leaves one liberty: a net
    copy_for_reading(b, s, lb, ls)
    play(lb, ls, zob, p, c)
    if lb[LIBS, lb[HEAD, h]] != 1:
        return False
    return ladder_captured(lb, ls, zob, h)


@njit(nogil=True, cache=True, _nrt=False)
def save_move(b, s, zob, h, c, ladder, lb, ls):
    """A move that saves c's chain headed by h from atari, or PASS: capture
    a neighbour in atari, else run out to at least three liberties, or two
    when the ladder reader (``ladder``) finds no ladder."""
    q, lib = counter_or_liberty(b, s, h)
    if q != PASS:
        if is_legal(b, s, q, c):
            return q
        lib = chain_liberty(b, s, h)     # the walk stopped at the capture
    if not is_legal(b, s, lib, c):
        return PASS
    n = libs_after(b, s, lib, c)
    if n >= 3 or (n == 2 and not (ladder and escape_fails(b, s, zob, h, lb, ls))):
        return lib
    return PASS


@njit(nogil=True, cache=True, _nrt=False)
def policy_move(b, s, zob, rng, c, gammas, pp, cand, wts, lb, ls):
    """The rollout policy: (1) capture a chain next to the last move that is
    in atari, (2) save an own chain the last move put in atari (capturing a
    neighbour, or running out where no ladder catches it), (3) with
    ``pp[PP_TWO_LIB]``, atari the last move's chain when it has two
    liberties and the atari catches it, (4) a 3x3 pattern move around the
    last move, sampled with probability gamma / (sum of gammas + mass),
    (5) a random move that fills no own eye and puts no chain of
    ``pp[PP_SA_LIMIT]`` or more stones in atari.  ``cand``/``wts``/``lb``/
    ``ls`` are the calling thread's PlayoutScratch."""
    last = s[S_LAST]
    w = s[S_W]
    o = 3 - c
    sa_limit = np.int64(pp[PP_SA_LIMIT])
    ladder = pp[PP_LADDER] > 0
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
                p = save_move(b, s, zob, b[HEAD, q], c, ladder, lb, ls)
                if p != PASS:
                    return p
        # atari_captures for each liberty, reading the chain's two
        # liberties and its neighbours in atari once for both
        h = b[HEAD, last]
        if pp[PP_TWO_LIB] > 0 and b[LIBS, h] == 2 and counter_capture(b, s, h) == PASS:
            l1, l2 = two_liberties(b, s, h)
            for k in range(2):
                p = l1 if k == 0 else l2
                run = l2 if k == 0 else l1
                if (is_legal(b, s, p, c) and libs_after(b, s, p, c) >= 2
                        and atari_holds(b, s, zob, p, run, c, h, lb, ls)):
                    return p
    if last != PASS:
        n = 0
        total = 0.0
        for d in (-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1):
            p = last + d
            if b[COLOR, p] != EMPTY:
                continue
            code = pattern_code(b, s, p, c)
            if code_is_eye(code) or (not code_has_empty_side(code) and not is_legal(b, s, p, c)):
                continue
            g = gammas[code]
            cand[n] = p
            wts[n] = g
            total += g
            n += 1
        if n > 0:
            r = rng_unit(rng) * (total + pp[PP_MASS])
            if r < total:
                for i in range(n):
                    r -= wts[i]
                    if r < 0.0 and (sa_limit == 0 or not self_atari(b, s, cand[i], c, sa_limit)):
                        return cand[i]
    return random_move(b, s, rng, c, sa_limit)


@njit(nogil=True, cache=True, _nrt=False)
def policy_playout(b, s, zob, rng, max_moves, gammas, pp, cand, wts, lb, ls, seq, nseq):
    """Play the rollout policy until two passes or max_moves, appending the
    moves to ``seq`` from index ``nseq`` (for AMAF); returns the new length."""
    for _ in range(max_moves):
        c = s[S_TO_MOVE]
        p = policy_move(b, s, zob, rng, c, gammas, pp, cand, wts, lb, ls)
        play(b, s, zob, p, c)
        if nseq < seq.shape[0]:
            seq[nseq] = p
            nseq += 1
        if s[S_PASSES] >= 2:
            break
    return nseq
