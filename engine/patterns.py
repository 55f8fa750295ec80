"""3x3 move patterns for the playout policy.

A candidate move ``p`` (an empty point) is described by its 3x3
neighbourhood seen by the colour ``c`` to play there, packed into a 20-bit
integer by :func:`pattern_code`:

* bits ``2k, 2k+1`` (k = 0..7) hold neighbour k, in the fixed order
  NW, N, NE, W, E, SW, S, SE (north is towards the top of the board, i.e.
  the lower padded index), as 0 empty, 1 own stone, 2 opponent stone,
  3 off-board;
* bits 16..19 are the atari flags of the orthogonal neighbours N, W, E, S:
  set when that neighbour is a stone (of either colour) whose chain has
  exactly one liberty.

Colour needs no further normalisation (the code is already "from the view
of the player to move").  The eight symmetries of the square are folded at
table-build time: :func:`canonical_table` maps every raw code to the
smallest code of its orbit, and :func:`load_gammas` expands the shipped
per-class weights to a flat ``float32`` table of ``N_CODES`` entries indexed
by the raw code, so the hot path is ``gamma[pattern_code(b, s, p, c)]``.

Shipped data (``engine/data/patterns.npz``, written by
``python -m engine.learn_patterns``): ``codes`` (int32, the canonical codes
seen in training, ascending), ``gammas`` (float32, their Bradley-Terry
weights), ``default_gamma`` (weight of every code never seen in training),
and the metadata ``version``, ``games``, ``positions``, ``date`` and a few
training statistics.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np
from numba import njit

from engine.board import BLACK, COLOR, EMPTY, HEAD, LIBS, S_W, WALL, WHITE

N_BITS = 20
N_CODES = 1 << N_BITS
PATTERN_VERSION = 1
DATA_PATH = Path(__file__).resolve().parent / "data" / "patterns.npz"

# The weight given to codes never seen in training.  Gammas are scaled so
# that the commonest candidate class, an empty 3x3 neighbourhood (code 0),
# has weight 1; an unseen shape gets a tenth of that.  The value actually
# used is the one stored in the data file (``default_gamma``); this is what
# the learner writes there.
DEFAULT_GAMMA = 0.1

# (row offset, column offset) of the 8 neighbours in code order, and of the
# 4 orthogonal neighbours in atari-bit order.
NEIGHBOURS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))
ORTHOGONALS = ((-1, 0), (0, -1), (0, 1), (1, 0))


@njit(nogil=True, cache=True, _nrt=False)
def pattern_code(b, s, p, c):
    """20-bit code of the 3x3 neighbourhood of the empty point p for colour
    c to play (see the module docstring for the layout)."""
    w = s[S_W]
    code = 0
    shift = 0
    for d in (-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1):
        k = b[COLOR, p + d]
        if k == c:
            v = 1
        elif k == EMPTY:
            v = 0
        elif k == WALL:
            v = 3
        else:
            v = 2
        code |= v << shift
        shift += 2
    bit = 16
    for d in (-w, -1, 1, w):
        q = p + d
        k = b[COLOR, q]
        if (k == BLACK or k == WHITE) and b[LIBS, b[HEAD, q]] == 1:
            code |= 1 << bit
        bit += 1
    return code


# The low bits of the orthogonal fields N, W, E, S and of the diagonal
# fields NW, NE, SW, SE.  A field's low bit is set for an own stone (1) and
# off the board (3), its high bit for an opponent (2) and off the board.
_SIDES_LOW = (1 << 2) | (1 << 6) | (1 << 8) | (1 << 12)
_CORNERS_LOW = (1 << 0) | (1 << 4) | (1 << 10) | (1 << 14)


@njit(nogil=True, cache=True, _nrt=False)
def code_is_eye(code):
    """:func:`engine.board.is_eyeish` read from a pattern code: every side
    an own stone or off the board, and fewer than two of "an opponent
    diagonal" and "on the edge"."""
    if code & _SIDES_LOW != _SIDES_LOW:
        return False
    lo = code & _CORNERS_LOW
    hi = (code >> 1) & _CORNERS_LOW
    opp = hi & ~lo
    bad = (opp & 1) + ((opp >> 4) & 1) + ((opp >> 10) & 1) + ((opp >> 14) & 1)
    edge = 1 if hi & lo else 0
    return bad + edge < 2


@njit(nogil=True, cache=True, _nrt=False)
def code_has_empty_side(code):
    """True when a side of the point is empty: the move is then legal (no
    suicide, and a ko point has no empty side)."""
    return (code | (code >> 1)) & _SIDES_LOW != _SIDES_LOW


# --------------------------------------------------------------------------
# Symmetries (numpy, table-build time only)


def _symmetry_perms() -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """For each of the 8 symmetries of the square, where neighbour k and
    orthogonal k go: (perm8, perm4) with perm8[k] the new slot of slot k."""
    perms = []
    for swap in (False, True):
        for sy in (1, -1):
            for sx in (1, -1):
                def f(dy, dx, swap=swap, sy=sy, sx=sx):
                    if swap:
                        dy, dx = dx, dy
                    return dy * sy, dx * sx
                perm8 = tuple(NEIGHBOURS.index(f(*q)) for q in NEIGHBOURS)
                perm4 = tuple(ORTHOGONALS.index(f(*q)) for q in ORTHOGONALS)
                perms.append((perm8, perm4))
    return perms


SYMMETRIES = _symmetry_perms()     # SYMMETRIES[0] is the identity


def transform_code(code, t: int):
    """Code (an int or an integer array) under symmetry t of 0..7."""
    perm8, perm4 = SYMMETRIES[t]
    code = np.asarray(code, dtype=np.int64)
    out = np.zeros_like(code)
    for k in range(8):
        out |= ((code >> (2 * k)) & 3) << (2 * perm8[k])
    for k in range(4):
        out |= ((code >> (16 + k)) & 1) << (16 + perm4[k])
    return out if out.ndim else int(out)


@functools.lru_cache(maxsize=1)
def canonical_table() -> np.ndarray:
    """int32 array of N_CODES: the canonical (smallest) code of each raw
    code's symmetry class.  Read-only, computed once."""
    codes = np.arange(N_CODES, dtype=np.int64)
    canon = codes.copy()
    for t in range(1, 8):
        np.minimum(canon, transform_code(codes, t), out=canon)
    canon = canon.astype(np.int32)
    canon.flags.writeable = False
    return canon


def expand_gammas(codes: np.ndarray, gammas: np.ndarray, default: float) -> np.ndarray:
    """Flat float32 table over all raw codes from per-canonical-class
    weights; codes of classes not listed get ``default``."""
    by_class = np.full(N_CODES, default, dtype=np.float32)
    by_class[codes] = gammas
    return by_class[canonical_table()]


# --------------------------------------------------------------------------
# The shipped table


def _bad(path, why: str) -> ValueError:
    return ValueError(f"pattern file {path}: {why}")


def load_gammas(path: str | os.PathLike | None = None) -> np.ndarray:
    """The float32 gamma table (N_CODES entries, indexed by raw pattern
    code) from the learned pattern file (default: the shipped
    engine/data/patterns.npz).  Raises ValueError naming the file when it is
    missing or malformed."""
    path = Path(path) if path is not None else DATA_PATH
    try:
        with np.load(path, allow_pickle=False) as data:
            fields = {k: data[k] for k in data.files}
    except FileNotFoundError:
        raise _bad(path, "no such file (train it with python -m engine.learn_patterns)") from None
    except (OSError, ValueError, EOFError) as e:
        raise _bad(path, f"cannot read it ({e})") from None
    try:
        return gammas_from_fields(fields)
    except ValueError as e:
        raise _bad(path, str(e)) from None


def load_metadata(path: str | os.PathLike | None = None) -> dict:
    """The scalar metadata of a pattern file (version, games, positions,
    date, ...) as Python values."""
    path = Path(path) if path is not None else DATA_PATH
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k].item() for k in data.files if data[k].ndim == 0}
    except (OSError, ValueError, EOFError) as e:
        raise _bad(path, f"cannot read it ({e})") from None


def gammas_from_fields(fields: dict) -> np.ndarray:
    for key in ("version", "codes", "gammas", "default_gamma"):
        if key not in fields:
            raise ValueError(f"missing field {key!r}")
    version = fields["version"]
    if version.ndim != 0 or int(version) != PATTERN_VERSION:
        raise ValueError(f"pattern format version {version} is not {PATTERN_VERSION}")
    codes = fields["codes"]
    gammas = fields["gammas"]
    default = fields["default_gamma"]
    if codes.ndim != 1 or gammas.ndim != 1 or len(codes) != len(gammas):
        raise ValueError("codes and gammas must be 1-D arrays of equal length")
    if not np.issubdtype(codes.dtype, np.integer):
        raise ValueError("codes must be integers")
    if len(codes) and (codes.min() < 0 or codes.max() >= N_CODES):
        raise ValueError("pattern code out of range")
    codes = codes.astype(np.int64)
    if not np.array_equal(canonical_table()[codes], codes):
        raise ValueError("codes must be canonical")
    gammas = gammas.astype(np.float32)
    default = np.float32(default)
    if not (np.all(np.isfinite(gammas)) and np.all(gammas > 0)
            and np.isfinite(default) and default > 0):
        raise ValueError("gammas must be finite and positive")
    return expand_gammas(codes, gammas, default)
