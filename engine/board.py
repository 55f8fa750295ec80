"""The Go board: numba kernels over a structure of arrays, and a thin Python face.

Layout (design.md §3).  A board of size N lives in a padded one-dimensional
array of (N+2)^2 points: one border of WALL around the playing area, so the
four neighbours of point ``p`` are ``p-W, p-1, p+1, p+W`` with ``W = N+2`` and
no kernel ever needs a bounds check.  Point ``p = (N - row) * W + col + 1``
for 0-based ``(col, row)`` with row 0 the bottom line (GTP's row 1).

All per-point state is one ``int32`` array ``b`` of shape ``(NROWS, NP)``:

  COLOR   EMPTY/BLACK/WHITE/WALL
  HEAD    the chain's representative stone (valid on stones)
  NEXT    the next stone of the chain; chains are circular lists
  LIBS    exact liberty count of the chain (valid at its head)
  SIZE    number of stones of the chain (valid at its head)
  EMPTIES the list of empty points, ``s[S_NEMPTY]`` long
  EPOS    index of an empty point in EMPTIES
  MARK    scratch marks, compared with the stamp ``s[S_STAMP]``

and the scalars are one ``int64`` array ``s`` (indices ``S_*``).  A board is
copied with two array copies, which is what playouts and the tree do.

Every kernel takes ``b`` and ``s`` (and the Zobrist table where hashing is
involved) as arguments: no kernel reads mutable module state.  Rules: stones
with no liberties are captured, suicide is illegal, simple ko is kept in
``s[S_KO]``; positional superko is a game-level rule checked by the caller
with :func:`hash_after` against the game's hash history (see ``Board``).

The hot kernels (here, in playout, patterns, tree, search and priors) are
compiled with numba's ``_nrt=False``: they allocate nothing, and without
the runtime's reference counting a call between them no longer pays an
atomic incref/decref per array argument (19x19 search +22%).  A kernel
that allocates fails to compile that way, which keeps the rule "no
allocation on the hot path" checked; the few that allocate outside it
(``area_score``, the tree's ``compact`` and ``settle``) keep the
runtime.
"""

from __future__ import annotations

import numpy as np
from numba import njit

EMPTY, BLACK, WHITE, WALL = 0, 1, 2, 3
PASS = -1
MAX_SIZE = 25

#: Bound of every walk along a chain's circular stone list: no chain has
#: more stones than the largest board has points, so a walk that reaches it
#: is following a corrupted list and stops rather than spinning for ever.
MAX_CHAIN = MAX_SIZE * MAX_SIZE

COLOR, HEAD, NEXT, LIBS, SIZE, EMPTIES, EPOS, MARK = range(8)
NROWS = 8

(S_N, S_W, S_NEMPTY, S_KO, S_KO_COLOR, S_HASH, S_TO_MOVE, S_CAPS_B, S_CAPS_W,
 S_LAST, S_LAST2, S_STAMP, S_PASSES, S_MOVES) = range(14)
NSCALARS = 14

# Zobrist keys for every (colour, padded point) of the largest board.  A
# constant table, generated from a fixed seed so hashes are reproducible.
ZOBRIST = np.random.default_rng(20150101).integers(
    -(2**63), 2**63 - 1, size=(3, (MAX_SIZE + 2) ** 2), dtype=np.int64)
ZOBRIST[EMPTY, :] = 0


def n_points(size: int) -> int:
    return (size + 2) * (size + 2)


@njit(nogil=True, cache=True, _nrt=False)
def opponent(c):
    return 3 - c


@njit(nogil=True, cache=True, _nrt=False)
def clear(b, s, n):
    """Empty board of size n; b must hold at least (n+2)^2 points."""
    w = n + 2
    b[:, :] = 0
    k = 0
    for p in range(w * w):
        r, c = p // w, p % w
        if r == 0 or c == 0 or r == w - 1 or c == w - 1:
            b[COLOR, p] = WALL
        else:
            b[COLOR, p] = EMPTY
            b[EMPTIES, k] = p
            b[EPOS, p] = k
            k += 1
    s[:] = 0
    s[S_N] = n
    s[S_W] = w
    s[S_NEMPTY] = k
    s[S_KO] = PASS
    s[S_TO_MOVE] = BLACK
    s[S_LAST] = PASS
    s[S_LAST2] = PASS
    s[S_STAMP] = 1


@njit(nogil=True, cache=True, _nrt=False)
def copy_rows(src, dst, nrows, npts):
    """dst[:nrows, :npts] = src[:nrows, :npts], as explicit loops: numba
    compiles these to vector copies, its slice assignment of a 2-D array to
    a per-element loop about eight times slower (a 19x19 board: ~0.1 us
    against ~0.8 us), and boards are copied per simulation and per ladder
    read."""
    for r in range(nrows):
        for i in range(npts):
            dst[r, i] = src[r, i]


@njit(nogil=True, cache=True, _nrt=False)
def copy_board(b0, s0, b, s):
    """(b, s) = (b0, s0): every row of the points in use, and the scalars."""
    copy_rows(b0, b, NROWS, s0[S_W] * s0[S_W])
    for i in range(NSCALARS):
        s[i] = s0[i]


@njit(nogil=True, cache=True, _nrt=False)
def new_stamp(b, s):
    """A fresh mark value; resets the marks on (rare) wrap-around."""
    st = s[S_STAMP] + 1
    if st >= 2**30:
        b[MARK, :] = 0
        st = 1
    s[S_STAMP] = st
    return st


@njit(nogil=True, cache=True, _nrt=False)
def is_legal(b, s, p, c):
    """Legal for colour c under simple ko (not superko).  PASS is legal."""
    if p == PASS:
        return True
    if b[COLOR, p] != EMPTY:
        return False
    if p == s[S_KO] and c == s[S_KO_COLOR]:
        return False
    w = s[S_W]
    for d in (-w, -1, 1, w):
        q = p + d
        k = b[COLOR, q]
        if k == EMPTY:
            return True
        if k == c:
            if b[LIBS, b[HEAD, q]] > 1:
                return True
        elif k != WALL:
            if b[LIBS, b[HEAD, q]] == 1:
                return True
    return False


@njit(nogil=True, cache=True, _nrt=False)
def _remove_empty(b, s, p):
    i = b[EPOS, p]
    last = s[S_NEMPTY] - 1
    q = b[EMPTIES, last]
    b[EMPTIES, i] = q
    b[EPOS, q] = i
    s[S_NEMPTY] = last


@njit(nogil=True, cache=True, _nrt=False)
def _add_empty(b, s, p):
    k = s[S_NEMPTY]
    b[EMPTIES, k] = p
    b[EPOS, p] = k
    s[S_NEMPTY] = k + 1


@njit(nogil=True, cache=True, _nrt=False)
def _capture(b, s, zob, h):
    """Remove the chain headed by h; neighbouring chains gain liberties."""
    w = s[S_W]
    c = b[COLOR, h]
    n = 0
    q = h
    for _ in range(MAX_CHAIN):
        nxt = b[NEXT, q]
        b[COLOR, q] = EMPTY
        s[S_HASH] ^= zob[c, q]
        _add_empty(b, s, q)
        n += 1
        # q is a new liberty of each distinct adjacent chain (of either
        # colour: our own stones here are being removed, their libs are
        # moot); chains told apart by comparing heads.
        h1 = h2 = h3 = -1
        for d in (-w, -1, 1, w):
            r = q + d
            k = b[COLOR, r]
            if k == BLACK or k == WHITE:
                hr = b[HEAD, r]
                if hr != h1 and hr != h2 and hr != h3:
                    b[LIBS, hr] += 1
                    if h1 < 0:
                        h1 = hr
                    elif h2 < 0:
                        h2 = hr
                    else:
                        h3 = hr
        q = nxt
        if q == h:
            break
    return n


@njit(nogil=True, cache=True, _nrt=False)
def _touches(b, t, w, c, h):
    """True if the point t has a neighbouring stone of c's chain headed by h."""
    for f in (-w, -1, 1, w):
        r = t + f
        if b[COLOR, r] == c and b[HEAD, r] == h:
            return True
    return False


@njit(nogil=True, cache=True, _nrt=False)
def _libs_extended(b, s, p, h, c):
    """Liberties of c's chain headed by h once the single stone p joins it
    (no other chain joining, nothing captured): the chain's liberties but
    p, plus p's empty neighbours that touch no stone of the chain.  Sixteen
    reads instead of a walk of the whole chain.  Called before p joins the
    chain (p empty, or a stone heading a chain of its own)."""
    w = s[S_W]
    n = b[LIBS, h] - 1
    for d in (-w, -1, 1, w):
        e = p + d
        if b[COLOR, e] == EMPTY and not _touches(b, e, w, c, h):
            n += 1
    return n


@njit(nogil=True, cache=True, _nrt=False)
def _merged_libs(b, s, p, w, c, big, h1, h2, h3):
    """Liberties of the chain that the stone p makes of c's chains big (the
    largest), h1 and h2, h3 (-1 when absent), counted before they are
    relabelled: big's count less p, plus the points of p's neighbours and
    of the smaller chains' liberties that big does not already touch.  Only
    the smaller chains are walked."""
    st = new_stamp(b, s)
    b[MARK, p] = st
    n = b[LIBS, big] - 1
    for d in (-w, -1, 1, w):
        e = p + d
        if b[COLOR, e] == EMPTY:
            b[MARK, e] = st
            if not _touches(b, e, w, c, big):
                n += 1
    for h in (h1, h2, h3):
        if h < 0:
            continue
        r = h
        for _ in range(MAX_CHAIN):
            for d in (-w, -1, 1, w):
                t = r + d
                if b[COLOR, t] == EMPTY and b[MARK, t] != st:
                    b[MARK, t] = st
                    if not _touches(b, t, w, c, big):
                        n += 1
            r = b[NEXT, r]
            if r == h:
                break
    return n


@njit(nogil=True, cache=True, _nrt=False)
def _join(b, h, into):
    """Relabel the chain headed by h into the chain headed by into and
    splice their circular stone lists."""
    r = h
    for _ in range(MAX_CHAIN):
        b[HEAD, r] = into
        r = b[NEXT, r]
        if r == h:
            break
    t = b[NEXT, into]
    b[NEXT, into] = b[NEXT, h]
    b[NEXT, h] = t
    b[SIZE, into] += b[SIZE, h]


@njit(nogil=True, cache=True, _nrt=False)
def play(b, s, zob, p, c):
    """Play colour c at p (or PASS); the move must be legal.  Returns the
    number of stones captured."""
    s[S_LAST2] = s[S_LAST]
    s[S_LAST] = p
    s[S_MOVES] += 1
    s[S_TO_MOVE] = 3 - c
    if p == PASS:
        s[S_PASSES] += 1
        s[S_KO] = PASS
        return 0
    s[S_PASSES] = 0
    w = s[S_W]
    o = 3 - c
    _remove_empty(b, s, p)
    b[COLOR, p] = c
    b[HEAD, p] = p
    b[NEXT, p] = p
    b[SIZE, p] = 1
    s[S_HASH] ^= zob[c, p]
    # 1. Take the liberty from each distinct adjacent enemy chain, and find
    #    the distinct friendly chains (at most four of each; told apart by
    #    comparing heads, no marks).
    libs = 0
    e1 = e2 = e3 = -1
    f1 = f2 = f3 = f4 = -1
    for d in (-w, -1, 1, w):
        q = p + d
        k = b[COLOR, q]
        if k == EMPTY:
            libs += 1
        elif k == o:
            hq = b[HEAD, q]
            if hq != e1 and hq != e2 and hq != e3:
                b[LIBS, hq] -= 1
                if e1 < 0:
                    e1 = hq
                elif e2 < 0:
                    e2 = hq
                else:
                    e3 = hq
        elif k == c:
            hq = b[HEAD, q]
            if hq != f1 and hq != f2 and hq != f3:
                if f1 < 0:
                    f1 = hq
                elif f2 < 0:
                    f2 = hq
                elif f3 < 0:
                    f3 = hq
                else:
                    f4 = hq
    # 2. Join p to them.
    if f1 < 0:
        b[LIBS, p] = libs
    elif f2 < 0:
        b[LIBS, f1] = _libs_extended(b, s, p, f1, c)
        b[HEAD, p] = f1
        b[NEXT, p] = b[NEXT, f1]
        b[NEXT, f1] = p
        b[SIZE, f1] += 1
    else:
        # the largest chain keeps its head; only the others are walked
        big = f1
        for h in (f2, f3, f4):
            if h >= 0 and b[SIZE, h] > b[SIZE, big]:
                big = h
        others = (f1, f2, f3, f4)
        h1 = h2 = h3 = -1
        for h in others:
            if h >= 0 and h != big:
                if h1 < 0:
                    h1 = h
                elif h2 < 0:
                    h2 = h
                else:
                    h3 = h
        n = _merged_libs(b, s, p, w, c, big, h1, h2, h3)
        b[HEAD, p] = big
        b[NEXT, p] = b[NEXT, big]
        b[NEXT, big] = p
        b[SIZE, big] += 1
        for h in (h1, h2, h3):
            if h >= 0:
                _join(b, h, big)
        b[LIBS, big] = n
    # 3. Capture enemy chains left without liberties.
    captured = 0
    ko = PASS
    for d in (-w, -1, 1, w):
        q = p + d
        if b[COLOR, q] == o and b[LIBS, b[HEAD, q]] == 0:
            captured += _capture(b, s, zob, b[HEAD, q])
            ko = q
    if c == BLACK:
        s[S_CAPS_B] += captured
    else:
        s[S_CAPS_W] += captured
    h = b[HEAD, p]
    if captured == 1 and b[SIZE, h] == 1 and b[LIBS, h] == 1:
        s[S_KO] = ko
        s[S_KO_COLOR] = o
    else:
        s[S_KO] = PASS
    return captured


@njit(nogil=True, cache=True, _nrt=False)
def hash_after(b, s, zob, p, c):
    """Position hash after c plays the legal move p, without playing it
    (for positional superko checks)."""
    hsh = s[S_HASH]
    if p == PASS:
        return hsh
    hsh ^= zob[c, p]
    w = s[S_W]
    o = 3 - c
    st = new_stamp(b, s)
    for d in (-w, -1, 1, w):
        q = p + d
        if b[COLOR, q] == o:
            h = b[HEAD, q]
            if b[MARK, h] != st and b[LIBS, h] == 1:
                b[MARK, h] = st
                r = h
                for _ in range(MAX_CHAIN):
                    hsh ^= zob[o, r]
                    r = b[NEXT, r]
                    if r == h:
                        break
    return hsh


@njit(nogil=True, cache=True, _nrt=False)
def libs_after(b, s, p, c):
    """Exact liberties of the chain c would have after playing the legal
    move p (friendly chains merged, captures applied), without playing it.

    Without a capture and with at most one friendly neighbour chain (the
    common case) the count comes from that chain's count and p's
    neighbours; otherwise the chains are walked."""
    w = s[S_W]
    o = 3 - c
    h1 = -1                              # the one friendly chain, if one
    walk = False
    empties = 0
    for d in (-w, -1, 1, w):
        q = p + d
        k = b[COLOR, q]
        if k == EMPTY:
            empties += 1
        elif k == c:
            h = b[HEAD, q]
            if h1 < 0:
                h1 = h
            elif h != h1:
                walk = True
        elif k == o and b[LIBS, b[HEAD, q]] == 1:
            walk = True
    if not walk:
        if h1 < 0:
            return empties
        return _libs_extended(b, s, p, h1, c)
    st = new_stamp(b, s)
    b[MARK, p] = st
    n = 0
    for d in (-w, -1, 1, w):
        q = p + d
        k = b[COLOR, q]
        if k == EMPTY:
            if b[MARK, q] != st:
                b[MARK, q] = st
                n += 1
        elif k == c:
            h = b[HEAD, q]
            if b[MARK, h] != st:
                b[MARK, h] = st
                r = h
                for _ in range(MAX_CHAIN):
                    for e in (-w, -1, 1, w):
                        t = r + e
                        if b[COLOR, t] == EMPTY and b[MARK, t] != st:
                            b[MARK, t] = st
                            n += 1
                    r = b[NEXT, r]
                    if r == h:
                        break
    # stones of captured chains next to the new chain become liberties
    for d in (-w, -1, 1, w):
        q = p + d
        if b[COLOR, q] == o and b[LIBS, b[HEAD, q]] == 1:
            h = b[HEAD, q]
            r = h
            for _ in range(MAX_CHAIN):
                if b[MARK, r] != st:
                    for e in (-w, -1, 1, w):
                        t = r + e
                        if t == p or (b[COLOR, t] == c and b[MARK, b[HEAD, t]] == st):
                            b[MARK, r] = st
                            n += 1
                            break
                r = b[NEXT, r]
                if r == h:
                    break
    return n


@njit(nogil=True, cache=True, _nrt=False)
def chain_liberty(b, s, h):
    """One liberty of the chain headed by h (its only one when in atari)."""
    return other_liberty(b, s, h, PASS)


@njit(nogil=True, cache=True, _nrt=False)
def other_liberty(b, s, h, first):
    """A liberty of the chain headed by h other than ``first``, or PASS
    (with ``first`` PASS: any liberty)."""
    w = s[S_W]
    r = h
    for _ in range(MAX_CHAIN):
        for d in (-w, -1, 1, w):
            q = r + d
            if b[COLOR, q] == EMPTY and q != first:
                return q
        r = b[NEXT, r]
        if r == h:
            break
    return PASS


@njit(nogil=True, cache=True, _nrt=False)
def two_liberties(b, s, h):
    """(chain_liberty(h), other_liberty(h, that one)) in one walk: the
    chain's first two distinct liberties in walk order, PASS for each one
    it lacks."""
    w = s[S_W]
    l1 = PASS
    r = h
    for _ in range(MAX_CHAIN):
        for d in (-w, -1, 1, w):
            q = r + d
            if b[COLOR, q] == EMPTY:
                if l1 == PASS:
                    l1 = q
                elif q != l1:
                    return l1, q
        r = b[NEXT, r]
        if r == h:
            break
    return l1, PASS


@njit(nogil=True, cache=True, _nrt=False)
def is_eyeish(b, s, p, c):
    """True if p is a single-point eye of c: every neighbour is c (or the
    edge) and the opponent holds too few diagonals to make it false."""
    w = s[S_W]
    for d in (-w, -1, 1, w):
        k = b[COLOR, p + d]
        if k != c and k != WALL:
            return False
    bad = 0
    edge = 0
    for d in (-w - 1, -w + 1, w - 1, w + 1):
        k = b[COLOR, p + d]
        if k == WALL:
            edge = 1
        elif k == 3 - c:
            bad += 1
    return bad + edge < 2


@njit(nogil=True, cache=True, _nrt=False)
def playable(b, s, p, c):
    """``not is_eyeish(b, s, p, c) and is_legal(b, s, p, c)`` for an empty
    p, reading each neighbour once: the random move's test of every
    candidate."""
    if p == s[S_KO] and c == s[S_KO_COLOR]:
        return False
    w = s[S_W]
    o = 3 - c
    ok = False                           # an empty neighbour or a capture
    own = False                          # all neighbours c or the edge
    for d in (-w, -1, 1, w):
        q = p + d
        k = b[COLOR, q]
        if k == EMPTY:
            ok = True
        elif k == o:
            if b[LIBS, b[HEAD, q]] == 1:
                ok = True
        elif k == c:
            own = True
    if ok:
        return True
    if not own:
        return False                     # only enemy chains with 2+ liberties
    bad = 0                              # is every neighbour c or the edge?
    for d in (-w, -1, 1, w):
        if b[COLOR, p + d] == o:
            bad = 2
    if bad == 0:
        edge = 0
        for d in (-w - 1, -w + 1, w - 1, w + 1):
            k = b[COLOR, p + d]
            if k == WALL:
                edge = 1
            elif k == o:
                bad += 1
        if bad + edge < 2:
            return False                 # an own eye
    for d in (-w, -1, 1, w):
        q = p + d
        if b[COLOR, q] == c and b[LIBS, b[HEAD, q]] > 1:
            return True
    return False


@njit(nogil=True, cache=True, _nrt=False)
def area_fill(b, s, own, stack):
    """Tromp-Taylor area: (black points, white points).  Stones count for
    their colour, empty regions for the colour that alone reaches them.
    Adds +1 (black) or -1 (white) per owned point to ``own``; ``stack`` is
    scratch of at least the board's point count, so playouts score without
    allocating."""
    w = s[S_W]
    st = new_stamp(b, s)
    black = 0
    white = 0
    for p in range(w + 1, w * (w - 1) - 1):
        k = b[COLOR, p]
        if k == BLACK:
            black += 1
            own[p] += 1.0
        elif k == WHITE:
            white += 1
            own[p] -= 1.0
        elif k == EMPTY and b[MARK, p] != st:
            # flood the empty region; the stack keeps all of it, so it can
            # be credited to its owner afterwards
            stack[0] = p
            b[MARK, p] = st
            top = 0
            end = 1
            reach = 0
            while top < end:
                q = stack[top]
                top += 1
                for d in (-w, -1, 1, w):
                    r = q + d
                    kk = b[COLOR, r]
                    if kk == EMPTY:
                        if b[MARK, r] != st:
                            b[MARK, r] = st
                            stack[end] = r
                            end += 1
                    elif kk == BLACK:
                        reach |= 1
                    elif kk == WHITE:
                        reach |= 2
            if reach == 1 or reach == 2:
                if reach == 1:
                    black += end
                else:
                    white += end
                sign = 1.0 if reach == 1 else -1.0
                for i in range(end):
                    own[stack[i]] += sign
    return black, white


@njit(nogil=True, cache=True)
def area_score(b, s):
    """Tromp-Taylor area score: (black points, white points)."""
    n = b.shape[1]
    return area_fill(b, s, np.zeros(n), np.empty(n, np.int32))


@njit(nogil=True, cache=True, _nrt=False)
def rng_next(rng):
    """xorshift64* step on a one-element uint64 state array."""
    x = rng[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rng[0] = x
    return x * np.uint64(2685821657736338717)


@njit(nogil=True, cache=True, _nrt=False)
def rng_below(rng, n):
    """Uniform integer in [0, n)."""
    return np.int64((rng_next(rng) >> np.uint64(32)) * np.uint64(n) >> np.uint64(32))


# --------------------------------------------------------------------------
# Python face


_CHARS = {EMPTY: ".", BLACK: "X", WHITE: "O"}
COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"   # GTP column letters: no I


class IllegalMove(ValueError):
    """The move breaks the rules (occupied, suicide, ko or superko)."""

    def __init__(self, reason: str = "illegal move"):
        super().__init__(reason)


class Board:
    """A readable wrapper around the kernels, for Python code and tests.

    Moves are padded point indices (``PASS`` for a pass); ``point(col, row)``
    converts from 0-based coordinates with row 0 at the bottom.  ``history``
    holds the hash of every position of the game so far, for positional
    superko.
    """

    def __init__(self, size: int = 19):
        if not 2 <= size <= MAX_SIZE:
            raise ValueError(f"board size {size} out of range 2..{MAX_SIZE}")
        self.size = size
        self.b = np.zeros((NROWS, n_points(size)), np.int32)
        self.s = np.zeros(NSCALARS, np.int64)
        clear(self.b, self.s, size)
        self.history: list[int] = [int(self.s[S_HASH])]

    # geometry ------------------------------------------------------------
    @property
    def width(self) -> int:
        return self.size + 2

    def point(self, col: int, row: int) -> int:
        return (self.size - row) * self.width + col + 1

    def coords(self, p: int) -> tuple[int, int]:
        return p % self.width - 1, self.size - p // self.width

    def name(self, p: int) -> str:
        """GTP name of a point (``C3``, ``pass``), for logs and tests."""
        if p == PASS:
            return "pass"
        col, row = self.coords(p)
        return f"{COLUMNS[col]}{row + 1}"

    def at(self, text: str) -> int:
        """Point of a GTP vertex (``C3``, ``pass`` in any case)."""
        if text.lower() == "pass":
            return PASS
        col, row = COLUMNS.index(text[0].upper()), int(text[1:]) - 1
        if not (0 <= col < self.size and 0 <= row < self.size):
            raise ValueError(f"vertex {text} is off the {self.size}x{self.size} board")
        return self.point(col, row)

    def points(self):
        """Every on-board point, top row first, left to right."""
        w = self.width
        for r in range(1, self.size + 1):
            for c in range(1, self.size + 1):
                yield r * w + c

    # state ---------------------------------------------------------------
    def color(self, p: int) -> int:
        return int(self.b[COLOR, p])

    def liberties(self, p: int) -> int:
        return int(self.b[LIBS, self.b[HEAD, p]])

    def chain(self, p: int) -> list[int]:
        """The stones of the chain at ``p`` (a stone)."""
        stones, q = [p], int(self.b[NEXT, p])
        while q != p:
            stones.append(q)
            q = int(self.b[NEXT, q])
        return stones

    def chains(self):
        """Every chain on the board once, as its stones (``chain``), in the
        order of their first stone in ``points``."""
        seen: set[int] = set()
        for p in self.points():
            if self.b[COLOR, p] in (BLACK, WHITE) and p not in seen:
                stones = self.chain(p)
                seen.update(stones)
                yield stones

    @property
    def to_move(self) -> int:
        return int(self.s[S_TO_MOVE])

    @to_move.setter
    def to_move(self, c: int) -> None:
        self.s[S_TO_MOVE] = c

    @property
    def ko(self) -> int:
        return int(self.s[S_KO])

    @property
    def hash(self) -> int:
        return int(self.s[S_HASH])

    @property
    def captures(self) -> tuple[int, int]:
        """Stones captured so far by (black, white)."""
        return int(self.s[S_CAPS_B]), int(self.s[S_CAPS_W])

    def copy(self) -> "Board":
        other = Board.__new__(Board)
        other.size = self.size
        other.b = self.b.copy()
        other.s = self.s.copy()
        other.history = list(self.history)
        return other

    def is_empty(self) -> bool:
        return int(self.s[S_NEMPTY]) == self.size * self.size

    # moves ---------------------------------------------------------------
    def legality(self, p: int, c: int) -> str | None:
        """None if c may play p here, else the reason it may not."""
        if p == PASS:
            return None
        if self.b[COLOR, p] != EMPTY:
            return "occupied"
        if not is_legal(self.b, self.s, p, c):
            if p == self.s[S_KO] and c == self.s[S_KO_COLOR]:
                return "ko"
            return "suicide"
        if hash_after(self.b, self.s, ZOBRIST, p, c) in self.history:
            return "superko"
        return None

    def is_legal(self, p: int, c: int) -> bool:
        return self.legality(p, c) is None

    def play(self, p: int, c: int | None = None, superko: bool = True) -> int:
        """Play a legal move (positional superko included, unless ``superko``
        is False); returns the number of captured stones.  Raises IllegalMove
        otherwise."""
        if c is None:
            c = self.to_move
        reason = self.legality(p, c)
        if reason is not None and (superko or reason != "superko"):
            raise IllegalMove(f"illegal move ({reason})")
        n = play(self.b, self.s, ZOBRIST, p, c)
        self.history.append(int(self.s[S_HASH]))
        return n

    def place(self, p: int, c: int) -> None:
        """Put a stone down as a setup move (handicap, SGF AB/AW)."""
        if self.b[COLOR, p] != EMPTY or not is_legal(self.b, self.s, p, c):
            raise IllegalMove("illegal move (cannot place a stone there)")
        to_move = self.to_move
        play(self.b, self.s, ZOBRIST, p, c)
        self.s[S_TO_MOVE] = to_move
        self.s[S_MOVES] -= 1
        self.s[S_LAST] = self.s[S_LAST2] = PASS
        self.history.append(int(self.s[S_HASH]))

    def legal_moves(self, c: int | None = None) -> list[int]:
        if c is None:
            c = self.to_move
        return [p for p in self.points() if self.is_legal(p, c)]

    # scoring -------------------------------------------------------------
    def area(self) -> tuple[int, int]:
        black, white = area_score(self.b, self.s)
        return int(black), int(white)

    def score(self, komi: float) -> float:
        """Black's area minus white's area minus komi (positive: black wins)."""
        black, white = self.area()
        return black - white - komi

    # text ----------------------------------------------------------------
    @classmethod
    def from_ascii(cls, text: str, to_move: int = BLACK) -> "Board":
        """Board from rows of ``X`` (black), ``O`` (white) and ``.``/``+``
        (empty), top row first; spaces are ignored.  The stones are set up
        without captures, so the diagram must be a legal position."""
        rows = ["".join(line.split()) for line in text.strip().splitlines()]
        rows = [r for r in rows if r]
        size = len(rows)
        if any(len(r) != size for r in rows):
            raise ValueError("ASCII board must be square")
        board = cls(size)
        for r, line in enumerate(rows):
            for col, ch in enumerate(line):
                if ch in "XxOo":
                    c = BLACK if ch in "Xx" else WHITE
                    board.place(board.point(col, size - 1 - r), c)
                elif ch not in ".+":
                    raise ValueError(f"unexpected character {ch!r} in ASCII board")
        board.history = [board.hash]
        board.to_move = to_move
        return board

    def __str__(self) -> str:
        w = self.width
        return "\n".join(
            " ".join(_CHARS[int(self.b[COLOR, r * w + c])] for c in range(1, self.size + 1))
            for r in range(1, self.size + 1))
