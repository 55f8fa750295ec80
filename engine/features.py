"""Input planes for the policy network (Maddison et al. 2015, Table 1).

Every plane is binary and is computed for the player to move,
``c = s[S_TO_MOVE]`` ("own" = ``c``, "opponent" = ``3 - c``).

Plane list (``FEATURE_VERSION = 1``, ``N_PLANES = 38``)::

  index  name                      meaning
  0      OWN                       stone of the player to move
  1      OPP                       stone of the opponent
  2      EMPTY_PT                  empty point
  3-6    LIBS_1 .. LIBS_4P         liberties of the chain at a stone:
                                   1, 2, 3, >=4
  7-12   AFTER_1 .. AFTER_6P       liberties of the new stone's chain after
                                   the player to move plays at an empty
                                   point (joins and captures applied):
                                   1, 2, 3, 4, 5, >=6; zero where illegal
  13     LEGAL                     legal for the player to move (simple ko
                                   from ``s[S_KO]``; suicide is illegal;
                                   positional superko is not looked at)
  14-18  TURNS_1 .. TURNS_5P       turns since the stone on this point was
                                   played: 1, 2, 3, 4 for the stones of the
                                   last four moves (``history[0]`` is the
                                   latest) still on the board, >=5 for
                                   every other stone
  19-25  CAPTURE_0 .. CAPTURE_6P   stones the move at an empty point
                                   captures: 0, 1, 2, 3, 4, 5, >=6 (legal
                                   moves only: a legal move that captures
                                   nothing sets CAPTURE_0)
  26     LADDER_CAPTURE            the move ataris an opponent chain of two
                                   liberties that cannot escape the ladder
  27-35  RANK_1D .. RANK_9D        the rank: all ones in plane
                                   ``RANK_1D + rank - 1``; all zero when
                                   the rank is not in 1..9 (unknown)
  36     ONES                      constant ones
  37     ON_BOARD                  ones on the board.  The same as ONES in
                                   an N x N output; it marks the board when
                                   the planes are put in a larger canvas.

Orientation: ``out[k, i, j]`` is column ``j`` (0 = left) of row ``i``
counted *from the top*, as in the ASCII diagrams of ``Board.from_ascii``
and ``str(board)``: padded point ``p = (i + 1) * W + j + 1``, GTP row
``N - i``.

Kernels read the board ``(b, s)`` and never change it: their marks and
other work live in ``scratch_b`` / ``scratch_s`` from :func:`make_scratch`,
so threads may compute planes of one board at once, each with its own
scratch.  Nothing is allocated on the hot path.  The kernels are compiled
with numba's ``_nrt=False``: without reference counting of the arrays they
pass around (they allocate nothing), which halves their running time.

Liberties after a move are counted without playing it: the empty
neighbours of the point, the other liberties of the friendly chains it
joins (the liberties of chains with few liberties are cached per position)
and the captured stones next to the new chain.

Ladders are read on a copy of the colour row (``scratch_b[LCOL]``) with
an undo log of colour changes, by an AND-OR search: the hunter (the player
to move) answers a prey chain of two liberties with an atari at either
liberty; the prey, in atari, tries every capture of an adjacent hunter
chain in atari, then the extension at its liberty.  Three or more
liberties is an escape; one liberty with the hunter to move is a capture
(unless taking it would retake a ko).  A read is bounded by
``LADDER_MAX_DEPTH`` plies and ``LADDER_MAX_NODES`` nodes, and a prey node
with more than ``MAX_CAPTURES`` captures to try; a read cut short counts as
an escape.  Exact shortcuts on the real board settle most candidates
before any read (see :func:`_quick_ladder`), and prunings inside the read
skip moves that let the prey reach three liberties at once.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from engine.board import (BLACK, COLOR, EMPTY, HEAD, LIBS, MAX_CHAIN, MAX_SIZE, NEXT,
                          PASS, S_KO, S_KO_COLOR, S_N, S_TO_MOVE, S_W, SIZE,
                          WALL, WHITE, ZOBRIST, Board, is_legal, n_points)

FEATURE_VERSION = 1

OWN, OPP, EMPTY_PT = 0, 1, 2
LIBS_1, LIBS_2, LIBS_3, LIBS_4P = 3, 4, 5, 6
AFTER_1, AFTER_2, AFTER_3, AFTER_4, AFTER_5, AFTER_6P = 7, 8, 9, 10, 11, 12
LEGAL = 13
TURNS_1, TURNS_2, TURNS_3, TURNS_4, TURNS_5P = 14, 15, 16, 17, 18
CAPTURE_0, CAPTURE_1, CAPTURE_2, CAPTURE_3 = 19, 20, 21, 22
CAPTURE_4, CAPTURE_5, CAPTURE_6P = 23, 24, 25
LADDER_CAPTURE = 26
RANK_1D, RANK_9D = 27, 35
ONES = 36
ON_BOARD = 37
N_PLANES = 38

PLANE_NAMES = (
    ["own", "opponent", "empty"]
    + [f"libs_{k}" for k in ("1", "2", "3", "4+")]
    + [f"libs_after_{k}" for k in ("1", "2", "3", "4", "5", "6+")]
    + ["legal"]
    + [f"turns_since_{k}" for k in ("1", "2", "3", "4", "5+")]
    + [f"capture_{k}" for k in ("0", "1", "2", "3", "4", "5", "6+")]
    + ["ladder_capture"]
    + [f"rank_{k}d" for k in range(1, 10)]
    + ["ones", "on_board"])
assert len(PLANE_NAMES) == N_PLANES

HISTORY_USED = 4          # moves of the history that the turns planes read

LADDER_MAX_DEPTH = 256    # plies of one ladder read
LADDER_MAX_NODES = 1000   # nodes of one ladder read
MAX_CAPTURES = 8          # prey captures tried at one node (more: an escape)
# Steps of the read's loop: every step plays one of a frame's at most
# MAX_CAPTURES + 1 moves or hands a result up, and at most LADDER_MAX_NODES
# frames are opened, so a correct read never reaches this bound; it only
# stops a corrupted one (then read as "no ladder").
LADDER_MAX_STEPS = 2 * (LADDER_MAX_NODES + 1) * (MAX_CAPTURES + 1) + 2

# scratch_b rows (int32, shape (NSCRATCH, NP)).  Every mark row is compared
# with stamps from the one counter ss[SS_STAMP].  LLIB0.. hold the
# liberties of chains of at most LIBS_CACHED liberties, by head, valid
# while LLIBOK[head] == ss[SS_POS] (one stamp per position).
LIBS_CACHED = 6
LCOL, LMARK, LMARK2, LMARK3, LDIRTY, LLIBOK, LQ1, LQ2 = range(8)
LLIB0 = 8
NSCRATCH = LLIB0 + LIBS_CACHED
# scratch_s (int64): counters, one frame per ladder depth, the undo log
SS_STAMP, SS_LOG, SS_NODES, SS_READ, SS_POS = range(5)
SS_FRAMES = 8
F_SIDE, F_KO, F_OPT, F_MARK, F_NMOVES, F_MOVES = range(6)
FRAME = F_MOVES + MAX_CAPTURES + 1
SS_LOG0 = SS_FRAMES + FRAME * LADDER_MAX_DEPTH
LOG_SIZE = 4 * n_points(MAX_SIZE)     # entries (point << 2 | old colour)
NSCRATCH_S = SS_LOG0 + LOG_SIZE

STAMP_RESET = 2**30       # stamps restart (marks cleared) above this


def make_scratch(size: int) -> tuple[np.ndarray, np.ndarray]:
    """Scratch arrays ``(scratch_b, scratch_s)`` for boards of ``size``."""
    return (np.zeros((NSCRATCH, n_points(size)), np.int32),
            np.zeros(NSCRATCH_S, np.int64))


# --------------------------------------------------------------------------
# stamps


@njit(nogil=True, cache=True, inline='always', _nrt=False)
def _stamp(sb, ss):
    """A fresh mark value."""
    st = ss[SS_STAMP] + 1
    ss[SS_STAMP] = st
    return st


@njit(nogil=True, cache=True, inline='always', _nrt=False)
def _begin(sb, ss):
    """Start work on a position: clear the marks when the stamps run high
    (only here, so that no mark in use is lost; one call uses far fewer
    than the 2**31 - STAMP_RESET stamps left) and open a new position."""
    if ss[SS_STAMP] > STAMP_RESET:
        for r in (LMARK, LMARK2, LMARK3, LDIRTY, LLIBOK):
            sb[r, :] = 0
        ss[SS_STAMP] = 0
    ss[SS_POS] = _stamp(sb, ss)


# --------------------------------------------------------------------------
# liberties and captures of a move, on the real board


@njit(nogil=True, cache=True, _nrt=False)
def _chain_libs(b, s, h, sb, ss):
    """Cache the liberties of the chain headed by h (at most LIBS_CACHED of
    them) in sb[LLIB0.., h] for this position."""
    if sb[LLIBOK, h] == ss[SS_POS]:
        return
    w = s[S_W]
    st = _stamp(sb, ss)
    n = 0
    r = h
    for _ in range(MAX_CHAIN):
        for d in (-w, -1, 1, w):
            t = r + d
            if b[COLOR, t] == EMPTY and sb[LMARK3, t] != st:
                sb[LMARK3, t] = st
                sb[LLIB0 + n, h] = t
                n += 1
        r = b[NEXT, r]
        if r == h:
            break
    sb[LLIBOK, h] = ss[SS_POS]


@njit(nogil=True, cache=True, inline='always', _nrt=False)
def _move_stats(b, s, p, c, cap, sb, ss):
    """:func:`move_stats` inside a position opened by :func:`_begin`."""
    w = s[S_W]
    o = 3 - c
    # a first look, without marks: the distinct chains around p
    n = 0
    captured = 0
    nfriend = 0
    lower = 0
    f0 = f1 = f2 = -1
    e0 = e1 = e2 = -1
    for d in (-w, -1, 1, w):
        q = p + d
        k = b[COLOR, q]
        if k == EMPTY:
            n += 1
        elif k == c:
            h = b[HEAD, q]
            if h != f0 and h != f1 and h != f2:
                if f0 < 0:
                    f0 = h
                elif f1 < 0:
                    f1 = h
                else:
                    f2 = h
                nfriend += 1
                if b[LIBS, h] - 1 > lower:
                    lower = b[LIBS, h] - 1
        elif k == o:
            h = b[HEAD, q]
            if b[LIBS, h] == 1 and h != e0 and h != e1 and h != e2:
                if e0 < 0:
                    e0 = h
                elif e1 < 0:
                    e1 = h
                else:
                    e2 = h
                captured += b[SIZE, h]
    if n >= cap or lower >= cap:
        return cap, captured
    if nfriend == 0 and captured == 0:
        return n, 0
    if nfriend == 1 and captured == 0:
        # one chain joined: its other liberties and p's empty neighbours,
        # less the empty neighbours that are liberties of the chain already
        n += b[LIBS, f0] - 1
        for d in (-w, -1, 1, w):
            q = p + d
            if b[COLOR, q] != EMPTY:
                continue
            for e in (-w, -1, 1, w):
                t = q + e
                if t != p and b[COLOR, t] == c and b[HEAD, t] == f0:
                    n -= 1
                    break
        if n > cap:
            n = cap
        return n, 0
    # The general case, with marks: p and the liberties counted (LMARK),
    # the heads of the chains joined (LMARK2).
    st = _stamp(sb, ss)
    sb[LMARK, p] = st
    for d in (-w, -1, 1, w):
        q = p + d
        k = b[COLOR, q]
        if k == EMPTY:
            sb[LMARK, q] = st
        elif k == c:
            sb[LMARK2, b[HEAD, q]] = st
    # the liberties of the friendly chains joined
    for d in (-w, -1, 1, w):
        q = p + d
        if b[COLOR, q] != c:
            continue
        h = b[HEAD, q]
        if sb[LMARK, h] == st:
            continue
        sb[LMARK, h] = st
        nl = b[LIBS, h]
        if nl <= LIBS_CACHED:
            _chain_libs(b, s, h, sb, ss)
            for i in range(nl):
                t = sb[LLIB0 + i, h]
                if sb[LMARK, t] != st:
                    sb[LMARK, t] = st
                    n += 1
        else:
            r = h
            for _ in range(MAX_CHAIN):
                for e in (-w, -1, 1, w):
                    t = r + e
                    if b[COLOR, t] == EMPTY and sb[LMARK, t] != st:
                        sb[LMARK, t] = st
                        n += 1
                r = b[NEXT, r]
                if r == h:
                    break
        if n >= cap:
            return cap, captured
    # captured stones next to p or to a joined chain become liberties
    if captured > 0:
        for d in (-w, -1, 1, w):
            q = p + d
            if b[COLOR, q] != o:
                continue
            h = b[HEAD, q]
            if b[LIBS, h] != 1 or sb[LMARK, h] == st:
                continue
            sb[LMARK, h] = st
            r = h
            for _ in range(MAX_CHAIN):
                for e in (-w, -1, 1, w):
                    t = r + e
                    if t == p or (b[COLOR, t] == c and sb[LMARK2, b[HEAD, t]] == st):
                        n += 1
                        break
                r = b[NEXT, r]
                if r == h:
                    break
    if n > cap:
        n = cap
    return n, captured


@njit(nogil=True, cache=True, _nrt=False)
def move_stats(b, s, p, c, cap, sb, ss):
    """For a legal move p of colour c: ``(min(libs, cap), captured)``, where
    libs is the exact number of liberties of the chain holding the new
    stone after the move (captures applied) and captured the number of
    stones the move takes.  The board is neither copied nor changed."""
    _begin(sb, ss)
    return _move_stats(b, s, p, c, cap, sb, ss)


# --------------------------------------------------------------------------
# ladder reading on the scratch colours, with an undo log


@njit(nogil=True, cache=True, inline='always', _nrt=False)
def _fill(sb, ss, w, p, row, cap):
    """Flood fill the chain at p on the scratch colours, queueing its stones
    in ``sb[row]``.  Stops once ``cap`` liberties are found (the stones
    queued may then be only some of them).  Returns (stones, liberties,
    first liberty, second liberty)."""
    st = _stamp(sb, ss)
    c = sb[LCOL, p]
    sb[row, 0] = p
    sb[LMARK, p] = st
    n = 1
    i = 0
    nl = 0
    l0 = -1
    l1 = -1
    while i < n:
        r = sb[row, i]
        i += 1
        for d in (-w, -1, 1, w):
            t = r + d
            if sb[LMARK, t] == st:
                continue
            k = sb[LCOL, t]
            if k == c:
                sb[LMARK, t] = st
                sb[row, n] = t
                n += 1
            elif k == EMPTY:
                sb[LMARK, t] = st
                if nl == 0:
                    l0 = t
                elif nl == 1:
                    l1 = t
                nl += 1
                if nl >= cap:
                    return n, nl, l0, l1
    return n, nl, l0, l1


@njit(nogil=True, cache=True, inline='always', _nrt=False)
def _log(sb, ss, p, old):
    k = ss[SS_LOG]
    ss[SS_LOG0 + k] = p * 4 + old
    ss[SS_LOG] = k + 1


@njit(nogil=True, cache=True, inline='always', _nrt=False)
def _undo(sb, ss, mark):
    """Restore the scratch colours to the log position mark."""
    k = ss[SS_LOG]
    while k > mark:
        k -= 1
        v = ss[SS_LOG0 + k]
        sb[LCOL, v >> 2] = v & 3
    ss[SS_LOG] = k


@njit(nogil=True, cache=True, inline='always', _nrt=False)
def _dirty(b, sb, ss, w, x):
    """Point x changes during this read: the real-board chains on or next to
    x may no longer match the scratch colours."""
    rd = ss[SS_READ]
    for d in (0, -w, -1, 1, w):
        y = x + d
        k = b[COLOR, y]
        if k == BLACK or k == WHITE:
            sb[LDIRTY, b[HEAD, y]] = rd


@njit(nogil=True, cache=True, inline='always', _nrt=False)
def _empties(sb, w, y, x):
    """Empty neighbours of y on the scratch colours, x left out."""
    n = 0
    for d in (-w, -1, 1, w):
        t = y + d
        if t != x and sb[LCOL, t] == EMPTY:
            n += 1
    return n


@njit(nogil=True, cache=True, inline='always', _nrt=False)
def _wlegal(sb, ss, w, x, c, ko):
    """Legality of c at x on the scratch colours (ko: the point c may not
    play because of a simple ko)."""
    if sb[LCOL, x] != EMPTY or x == ko:
        return False
    for d in (-w, -1, 1, w):
        if sb[LCOL, x + d] == EMPTY:
            return True
    for d in (-w, -1, 1, w):
        q = x + d
        k = sb[LCOL, q]
        if k == c:
            # a friendly chain with a liberty besides x
            if _empties(sb, w, q, x) > 0 or _fill(sb, ss, w, q, LQ2, 2)[1] >= 2:
                return True
        elif k == 3 - c:
            # an enemy chain whose last liberty is x
            if _empties(sb, w, q, x) == 0 and _fill(sb, ss, w, q, LQ2, 2)[1] == 1:
                return True
    return False


@njit(nogil=True, cache=True, _nrt=False)
def _wplay(b, sb, ss, w, x, c):
    """Play the legal move c at x on the scratch colours, logging every
    change.  Returns the ko point it makes for the opponent (or PASS)."""
    o = 3 - c
    _log(sb, ss, x, EMPTY)
    _dirty(b, sb, ss, w, x)
    sb[LCOL, x] = c
    captured = 0
    last = PASS
    for d in (-w, -1, 1, w):
        q = x + d
        if sb[LCOL, q] != o or _empties(sb, w, q, PASS) > 0:
            continue
        n, nl, _, _ = _fill(sb, ss, w, q, LQ2, 1)
        if nl == 0:
            for i in range(n):
                r = sb[LQ2, i]
                _log(sb, ss, r, o)
                _dirty(b, sb, ss, w, r)
                sb[LCOL, r] = EMPTY
            captured += n
            last = q
    if captured != 1:
        return PASS
    libs = 0
    for d in (-w, -1, 1, w):
        k = sb[LCOL, x + d]
        if k == c:
            return PASS
        if k == EMPTY:
            libs += 1
    if libs == 1:
        return last
    return PASS


@njit(nogil=True, cache=True, _nrt=False)
def _open(b, sb, ss, w, prey, depth, hunter, ko):
    """Enter a ladder node: 1 if the hunter has won there, 0 if the prey has
    escaped (or the read is out of depth, nodes or log), else -1 after
    setting up the node's frame at ``depth`` with the moves to try.  ko is
    the point the side to move may not play."""
    if hunter:
        nl, l0, l1 = _fill(sb, ss, w, prey, LQ1, 3)[1:]
        if nl == 0:
            return 1
        if nl == 1:
            return 1 if l0 != ko else 0
        if nl >= 3:
            return 0
    else:
        n, nl, l0, _ = _fill(sb, ss, w, prey, LQ1, 1 << 30)
        if nl == 0:
            return 1
        if nl >= 2:
            return 0
        # Extending to a point with three empty neighbours escapes.  (The
        # liberty is never the ko point: a single stone just taken there
        # would have touched, so belonged to, the prey.)
        if _empties(sb, w, l0, PASS) >= 3:
            return 0
    if depth >= LADDER_MAX_DEPTH or ss[SS_NODES] >= LADDER_MAX_NODES:
        return 0
    if ss[SS_LOG] + sb.shape[1] + 1 > LOG_SIZE:
        return 0
    ss[SS_NODES] += 1
    f = SS_FRAMES + depth * FRAME
    ss[f + F_SIDE] = 1 if hunter else 0
    ss[f + F_KO] = ko
    ss[f + F_OPT] = 0
    if hunter:
        # An atari at one liberty lets the prey out if the other liberty
        # has three empty neighbours besides it.  The more promising first.
        e0 = _empties(sb, w, l1, l0)
        e1 = _empties(sb, w, l0, l1)
        if e1 < e0:
            l0, l1, e0, e1 = l1, l0, e1, e0
        m = 0
        if e0 < 3:
            ss[f + F_MOVES + m] = l0
            m += 1
        if e1 < 3:
            ss[f + F_MOVES + m] = l1
            m += 1
        if m == 0:
            return 0
        ss[f + F_NMOVES] = m
        return -1
    # The prey: every capture of an adjacent hunter chain in atari, then
    # the extension.  Its stones are still queued in LQ1.  Hunter chains
    # the read has not touched keep their real liberty counts.
    hc = 3 - sb[LCOL, prey]
    st2 = _stamp(sb, ss)
    rd = ss[SS_READ]
    m = 0
    for i in range(n):
        r = sb[LQ1, i]
        for d in (-w, -1, 1, w):
            q = r + d
            if sb[LCOL, q] != hc or sb[LMARK2, q] == st2:
                continue
            if b[COLOR, q] == hc:
                hq = b[HEAD, q]
                if sb[LDIRTY, hq] != rd:
                    if sb[LMARK2, hq] == st2 or b[LIBS, hq] > 1:
                        continue
                    sb[LMARK2, hq] = st2
            if _empties(sb, w, q, PASS) >= 2:
                continue
            m2, nlq, x, _ = _fill(sb, ss, w, q, LQ2, 2)
            for j in range(m2):
                sb[LMARK2, sb[LQ2, j]] = st2
            if nlq == 1 and sb[LMARK2, x] != st2:
                sb[LMARK2, x] = st2
                if m == MAX_CAPTURES:
                    return 0
                ss[f + F_MOVES + m] = x
                m += 1
    if sb[LMARK2, l0] != st2:
        ss[f + F_MOVES + m] = l0
        m += 1
    ss[f + F_NMOVES] = m
    return -1


@njit(nogil=True, cache=True, _nrt=False)
def _ladder(b, sb, ss, w, prey, ko):
    """The AND-OR search, the prey (the chain at point prey, in atari) to
    move: True if the hunter captures it.  Iterative, with its frames in
    ``ss``: numba's cache mishandles recursive functions."""
    pc = sb[LCOL, prey]
    hc = 3 - pc
    ss[SS_NODES] = 0
    r = _open(b, sb, ss, w, prey, 0, False, ko)
    if r >= 0:
        return r == 1
    d = 0
    for _ in range(LADDER_MAX_STEPS):
        f = SS_FRAMES + d * FRAME
        hunter = ss[f + F_SIDE] == 1
        c = hc if hunter else pc
        ko = ss[f + F_KO]
        # the frame's next legal move
        x = PASS
        while x == PASS and ss[f + F_OPT] < ss[f + F_NMOVES]:
            cand = ss[f + F_MOVES + ss[f + F_OPT]]
            ss[f + F_OPT] += 1
            if _wlegal(sb, ss, w, cand, c, ko):
                x = cand
        if x == PASS:
            # no move left that wins: the node is lost for its side
            r = 0 if hunter else 1
            cd = d
        else:
            ss[f + F_MARK] = ss[SS_LOG]
            nko = _wplay(b, sb, ss, w, x, c)
            r = _open(b, sb, ss, w, prey, d + 1, not hunter, nko)
            if r < 0:
                d += 1
                continue
            cd = d + 1
        # hand the result r of the node at depth cd up to its parents
        for _ in range(LADDER_MAX_DEPTH + 2):
            pd = cd - 1
            if pd < 0:
                return r == 1
            pf = SS_FRAMES + pd * FRAME
            _undo(sb, ss, ss[pf + F_MARK])
            if (ss[pf + F_SIDE] == 1) == (r == 1):
                cd = pd     # the parent's side has its winning move
                continue
            d = pd
            break
    return False


@njit(nogil=True, cache=True, _nrt=False)
def _read_ladder(b, s, p, c, prey, sb, ss):
    """With the board on the scratch colours: True if c playing the legal
    move p (an atari on the chain at prey) captures the chain in a ladder.
    Leaves the scratch colours as they were."""
    w = s[S_W]
    mark = ss[SS_LOG]
    ss[SS_READ] = _stamp(sb, ss)
    nko = _wplay(b, sb, ss, w, p, c)
    r = _ladder(b, sb, ss, w, prey, nko)
    _undo(sb, ss, mark)
    return r


@njit(nogil=True, cache=True, _nrt=False)
def _load_colours(b, s, sb, ss):
    w = s[S_W]
    for p in range(w * w):
        sb[LCOL, p] = b[COLOR, p]
    ss[SS_LOG] = 0


# --------------------------------------------------------------------------
# ladder candidates, and exact shortcuts on the real board


@njit(nogil=True, cache=True, _nrt=False)
def _second_atari_fails(b, s, p, lib, o, sb, ss):
    """After the atari at p and the extension at lib, neither of which
    captures, the chain of colour o has two liberties: True if an atari at
    either lets it extend at the other to three or more liberties."""
    w = s[S_W]
    st = _stamp(sb, ss)
    sb[LMARK, p] = st
    sb[LMARK, lib] = st
    l0 = PASS
    l1 = PASS
    n = 0
    for d in (-w, -1, 1, w):
        q = lib + d
        k = b[COLOR, q]
        if k == EMPTY:
            if sb[LMARK, q] != st:
                sb[LMARK, q] = st
                if n == 0:
                    l0 = q
                else:
                    l1 = q
                n += 1
        elif k == o:
            h = b[HEAD, q]
            if b[LIBS, h] > LIBS_CACHED:
                return False
            _chain_libs(b, s, h, sb, ss)
            for i in range(b[LIBS, h]):
                t = sb[LLIB0 + i, h]
                if sb[LMARK, t] != st:
                    sb[LMARK, t] = st
                    if n == 0:
                        l0 = t
                    else:
                        l1 = t
                    n += 1
    if n != 2:
        return False
    for x, y in ((l0, l1), (l1, l0)):
        # The atari at x, the extension at y: the chain's liberties include
        # y's empty neighbours and the liberties of the o chains it joins
        # there, less x, y, p and lib (captures could only add some).
        st = _stamp(sb, ss)
        sb[LMARK, x] = st
        sb[LMARK, y] = st
        sb[LMARK, p] = st
        sb[LMARK, lib] = st
        e = 0
        for d in (-w, -1, 1, w):
            t = y + d
            k = b[COLOR, t]
            if k == EMPTY:
                if sb[LMARK, t] != st:
                    sb[LMARK, t] = st
                    e += 1
            elif k == o:
                h = b[HEAD, t]
                if b[LIBS, h] > LIBS_CACHED:
                    e = 3
                    break
                _chain_libs(b, s, h, sb, ss)
                for i in range(b[LIBS, h]):
                    u = sb[LLIB0 + i, h]
                    if sb[LMARK, u] != st:
                        sb[LMARK, u] = st
                        e += 1
        if e < 3:
            return False
    return True


@njit(nogil=True, cache=True, _nrt=False)
def _quick_ladder(b, s, p, c, h, sb, ss):
    """Exact shortcuts on the real board for c playing p against the
    opponent chain h of two liberties: 0 if the chain escapes (extending
    gives it three or more liberties, or two that no atari can hold), 1 if
    it is captured at once (nothing to capture, and extending leaves it one
    liberty at most), -1 if the ladder has to be read out.

    All of them need a move p that captures nothing; the liberties counted
    for the extension on the real board then include p once."""
    w = s[S_W]
    o = 3 - c
    st = _stamp(sb, ss)
    for d in (-w, -1, 1, w):
        q = p + d
        k = b[COLOR, q]
        if k == o:
            if b[LIBS, b[HEAD, q]] == 1:
                return -1
        elif k == c:
            sb[LMARK2, b[HEAD, q]] = st       # the c chains p joins
    # the chain's other liberty, and the weakest c chain next to it that p
    # does not join
    lib = PASS
    weakest = 1 << 30
    r = h
    for _ in range(MAX_CHAIN):
        for d in (-w, -1, 1, w):
            t = r + d
            k = b[COLOR, t]
            if k == EMPTY:
                if t != p:
                    lib = t
            elif k == c:
                ht = b[HEAD, t]
                if b[LIBS, ht] < weakest and sb[LMARK2, ht] != st:
                    weakest = b[LIBS, ht]
        r = b[NEXT, r]
        if r == h:
            break
    if lib == PASS:
        return -1
    libs, captured = _move_stats(b, s, lib, o, 4, sb, ss)
    if captured != 0:
        return -1
    if libs >= 4:
        return 0
    if libs == 3 and _second_atari_fails(b, s, p, lib, o, sb, ss):
        return 0
    if libs <= 2 and weakest >= 2 and _move_stats(b, s, p, c, 2, sb, ss)[0] >= 2:
        # After p the chain has one liberty and nothing to capture: the c
        # chains next to it that p does not join keep two liberties or
        # more, the one p makes has two.  Extending leaves it one liberty
        # at most, and captures nothing, so no ko stops the capture.
        return 1
    return -1


@njit(nogil=True, cache=True, _nrt=False)
def _ladder_at(b, s, p, c, sb, ss, loaded):
    """Whether the legal move p of c captures one of the distinct opponent
    chains of two liberties next to it in a ladder.  ``loaded``: the
    scratch colours hold the board already.  Returns (capture, loaded)."""
    w = s[S_W]
    o = 3 - c
    for d in (-w, -1, 1, w):
        q = p + d
        if b[COLOR, q] != o:
            continue
        h = b[HEAD, q]
        if b[LIBS, h] != 2:
            continue
        seen = False
        for e in (-w, -1, 1, w):
            if e == d:
                break
            if b[COLOR, p + e] == o and b[HEAD, p + e] == h:
                seen = True
        if seen:
            continue
        quick = _quick_ladder(b, s, p, c, h, sb, ss)
        if quick == 0:
            continue
        if quick == 1:
            return True, loaded
        if not loaded:
            _load_colours(b, s, sb, ss)
            loaded = True
        if _read_ladder(b, s, p, c, h, sb, ss):
            return True, loaded
    return False, loaded


@njit(nogil=True, cache=True, _nrt=False)
def ladder_captures(b, s, p, c, sb, ss):
    """True if c playing p captures an adjacent opponent chain of two
    liberties in a ladder (False where the move is illegal)."""
    if p < 0 or b[COLOR, p] != EMPTY or not is_legal(b, s, p, c):
        return False
    _begin(sb, ss)
    return _ladder_at(b, s, p, c, sb, ss, False)[0]


# --------------------------------------------------------------------------
# the planes


@njit(nogil=True, cache=True, _nrt=False)
def compute_planes(b, s, zob, history, rank, out, scratch_b, scratch_s):
    """Write the N_PLANES planes of the position (b, s) for the player to
    move ``s[S_TO_MOVE]`` into ``out``, shape (N_PLANES, N, N), any numeric
    dtype (float32 or uint8), row 0 the top row of the board.

    history: int array of the latest moves' points, most recent first
    (PASS = -1), at least HISTORY_USED of them for full turns planes.
    rank: 1..9 (dan) for the rank planes; any other value leaves them zero.
    scratch_b, scratch_s: from :func:`make_scratch` for this board size.
    zob: unused, taken so that the kernel has the board kernels' leading
    arguments.  The board is not modified."""
    n = s[S_N]
    w = s[S_W]
    c = s[S_TO_MOVE]
    out[:, :n, :n] = 0
    _begin(scratch_b, scratch_s)
    loaded = False
    for i in range(n):
        base = (i + 1) * w + 1
        for j in range(n):
            p = base + j
            out[ONES, i, j] = 1
            out[ON_BOARD, i, j] = 1
            k = b[COLOR, p]
            if k != EMPTY:
                if k == c:
                    out[OWN, i, j] = 1
                else:
                    out[OPP, i, j] = 1
                libs = b[LIBS, b[HEAD, p]]
                if libs > 4:
                    libs = 4
                out[LIBS_1 + libs - 1, i, j] = 1
                out[TURNS_5P, i, j] = 1
                continue
            out[EMPTY_PT, i, j] = 1
            # One look at the neighbours: legality (engine.board.is_legal,
            # inlined), whether the move touches any stone, and whether it
            # ataris a chain of two liberties.
            n_empty = 0
            stones = 0
            legal = False
            two_libs = False
            for d in (-w, -1, 1, w):
                q = p + d
                kq = b[COLOR, q]
                if kq == EMPTY:
                    n_empty += 1
                elif kq != WALL:
                    stones += 1
                    lq = b[LIBS, b[HEAD, q]]
                    if kq == c:
                        legal |= lq > 1
                    else:
                        legal |= lq == 1
                        two_libs |= lq == 2
            if n_empty == 0 and not legal:
                continue
            if p == s[S_KO] and c == s[S_KO_COLOR]:
                continue
            out[LEGAL, i, j] = 1
            if stones == 0:
                out[AFTER_1 + n_empty - 1, i, j] = 1
                out[CAPTURE_0, i, j] = 1
                continue
            libs, captured = _move_stats(b, s, p, c, 6, scratch_b, scratch_s)
            out[AFTER_1 + libs - 1, i, j] = 1
            if captured > 6:
                captured = 6
            out[CAPTURE_0 + captured, i, j] = 1
            if two_libs:
                lad, loaded = _ladder_at(b, s, p, c, scratch_b, scratch_s, loaded)
                if lad:
                    out[LADDER_CAPTURE, i, j] = 1
    # turns since: the latest move on a point wins
    m = history.shape[0]
    if m > HISTORY_USED:
        m = HISTORY_USED
    for t in range(m):
        p = history[t]
        if p < w or p >= w * (w - 1):
            continue
        k = b[COLOR, p]
        if k != BLACK and k != WHITE:
            continue
        i = p // w - 1
        j = p % w - 1
        if out[TURNS_5P, i, j] != 0:
            out[TURNS_5P, i, j] = 0
            out[TURNS_1 + t, i, j] = 1
    if 1 <= rank <= 9:
        out[RANK_1D + rank - 1, :n, :n] = 1


# --------------------------------------------------------------------------
# Python face


_SCRATCH: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _scratch(size: int) -> tuple[np.ndarray, np.ndarray]:
    sc = _SCRATCH.get(size)
    if sc is None:
        sc = _SCRATCH[size] = make_scratch(size)
    return sc


def history_array(history=()) -> np.ndarray:
    """The kernel's history argument from a sequence of points, most
    recent first (PASS for a pass), padded with PASS."""
    h = [int(p) for p in history][:HISTORY_USED]
    h += [PASS] * (HISTORY_USED - len(h))
    return np.array(h, np.int32)


def planes(board: Board, history=(), rank: int = 9, dtype=np.float32) -> np.ndarray:
    """The (N_PLANES, N, N) planes of ``board`` for ``board.to_move``.

    history: the latest moves' points, most recent first (PASS for a pass);
    the board keeps no move list, so the caller gives it.  Shares one
    scratch per board size, so it is not for threads: they should call
    :func:`compute_planes` with their own :func:`make_scratch`."""
    out = np.empty((N_PLANES, board.size, board.size), dtype)
    sb, ss = _scratch(board.size)
    compute_planes(board.b, board.s, ZOBRIST, history_array(history), int(rank),
                   out, sb, ss)
    return out


def libs_after(board: Board, p: int, c: int | None = None) -> int:
    """Exact liberties of the new stone's chain after c (default: the
    player to move) plays the legal move p, captures applied."""
    if c is None:
        c = board.to_move
    sb, ss = _scratch(board.size)
    return int(move_stats(board.b, board.s, p, c, 1 << 30, sb, ss)[0])


def is_ladder_capture(board: Board, p: int, c: int | None = None) -> bool:
    """True if c (default: the player to move) playing p captures an
    opponent chain in a ladder."""
    if c is None:
        c = board.to_move
    sb, ss = _scratch(board.size)
    return bool(ladder_captures(board.b, board.s, p, c, sb, ss))


__all__ = [
    "FEATURE_VERSION", "N_PLANES", "PLANE_NAMES", "HISTORY_USED",
    "OWN", "OPP", "EMPTY_PT", "LIBS_1", "LIBS_2", "LIBS_3", "LIBS_4P",
    "AFTER_1", "AFTER_2", "AFTER_3", "AFTER_4", "AFTER_5", "AFTER_6P",
    "LEGAL", "TURNS_1", "TURNS_2", "TURNS_3", "TURNS_4", "TURNS_5P",
    "CAPTURE_0", "CAPTURE_1", "CAPTURE_2", "CAPTURE_3", "CAPTURE_4",
    "CAPTURE_5", "CAPTURE_6P", "LADDER_CAPTURE", "RANK_1D", "RANK_9D",
    "ONES", "ON_BOARD", "make_scratch", "compute_planes", "move_stats",
    "ladder_captures", "history_array", "planes", "libs_after",
    "is_ladder_capture",
]
