"""Training data: SGF game records -> a compact game cache -> positions.

Build a cache (one ``.npz`` file)::

    python -m nets.data build DATA_DIR OUT.npz [--limit N] [--val-fraction F]
                              [--size 19] [--workers W] [--seed S]
    python -m nets.data subset OUT.npz SMALL.npz --games N [--seed S]
    python -m nets.data info OUT.npz

``DATA_DIR`` is searched recursively for ``*.sgf``.  ``--limit N`` reads a
deterministic random subset of N files (seeded by ``--seed``; mixing the
sources rather than taking the alphabetically first).

Cache layout (``np.savez_compressed``, no pickled objects)::

    format      "delayed-go-games", version 1
    size        board size N (19)
    moves       int16 (total_moves,)  point index i * N + j (i = row from the
                top, j = column from the left: the planes' layout), N * N = pass
    colours     int8  (total_moves,)  1 black, 2 white (the SGF's own colours,
                so non-alternating records replay as written)
    offsets     int64 (games + 1,)    game g's moves are moves[offsets[g]:offsets[g+1]]
    ranks       int8  (games, 2)      dan rank 1..9 of black, white
    komi        float32 (games,)
    winner      int8  (games,)        1 black won, 2 white won, 0 no winner (draw, void,
                                      no or unreadable RE)
    how         int8  (games,)        how the game ended: HOW_* (count, resignation, time,
                                      forfeit, unknown)
    margin      float32 (games,)      the winner's margin in points where counted, else 0
    val         bool  (games,)        validation game (the split is by game)
    source      bytes (games,)        path of the SGF file relative to DATA_DIR
    summary     JSON text             counts, what was skipped and why, ...

Kept and skipped: only size-N games (default 19) are kept; skipped and
counted by reason are unreadable records, other sizes, handicap games
(``HA`` >= 2; ``HA[1]`` is a no-komi even game and is kept), records with
setup stones (``AB``/``AW``), records without moves and records with an
illegal move (occupied point, suicide or simple-ko retake; positional
superko is not checked, since Japanese-rules records may legally repeat).

Ranks (``BR``/``WR``, read from the raw bytes of the root node and decoded
as UTF-8, which handles Fox's files without a ``CA[]``): ``7d``, ``7 dan``,
``7段`` and ``7단`` give 7; professional ranks (``1p``, ``P7段``, ``pro``)
give 9; kyu ranks (``3k``, ``18级``) give 1, the weakest rank plane; an
empty or unrecognised rank gives ``DEFAULT_RANK`` = 9 (Tygem and Tom games
were given 9d anyway, and the engine plays as 9d).  Komi: Fox encodes komi
times 100 (``KM[650]`` = 6.5) and counts ``KM[375]`` in stones (3.75 stones =
7.5 points): any ``|KM| >= 100`` is divided by 100 and the resulting 3.75 read
as 7.5.  KGS games with komi 0.5 or negative komi (games between players of
different rank) are even games all the same and are kept with their komi
as written; the policy net does not see komi, the value net does.  A komi
of exactly 0 is Fox's "unknown" (no even game between strong players is
played without komi), so such games give no value targets (see
:meth:`GameCache.value_games`).

Results (``RE``): ``B+R``/``W+Resign`` resignation, ``B+T`` time,
``B+F`` forfeit, ``W+2.5`` a count, ``0``/``Draw``/``Void``/``?`` or none no
winner.  A cache of version 1 (before results were kept) still loads, with
no winner for any game.

Validation split: a game is a validation game when the CRC-32 of its relative
path, as a fraction of 2^32, is below ``--val-fraction`` (default 0.01): the
split is by game, never by position, and stable when the cache is rebuilt
with another ``--limit``.  With at least two games there is at least one
game on each side.

Positions: :class:`PositionSampler` replays cached games on the engine's
board kernels and emits several positions of each replayed game (sampled
uniformly over the non-pass moves of the games: a game is drawn with
probability proportional to its number of non-pass moves), each under one of
the 8 symmetries of the board chosen at random, applied to the planes and to
the target alike.  Passes are replayed but are targets only for a net with
a pass output (``passes=True``: every move is then a position, the pass
index N * N among them).  The planes come from ``engine.features.compute_planes`` with
the sampler's own scratch, the history of the last moves and the rank of
the player to move.  A batch is a function of ``(seed, stream, step)`` only,
so training is reproducible and a resumed run draws the batches an
uninterrupted one would have drawn.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from engine.board import (NROWS, NSCALARS, PASS, S_TO_MOVE, ZOBRIST, clear, is_legal,
                          n_points, play)
from engine.features import N_PLANES, compute_planes, make_scratch

FORMAT = "delayed-go-games"
FORMAT_VERSION = 2
READS_VERSIONS = (1, 2)
HOW_COUNT, HOW_RESIGN, HOW_TIME, HOW_FORFEIT, HOW_UNKNOWN = range(5)
HOW_NAMES = ("count", "resign", "time", "forfeit", "unknown")

#: the random stream of the other komi the value targets are given
#: (:meth:`PositionSampler.value_targets`), apart from the batches' own
KOMI_STREAM = 0x6B6F6D69


def won_under_komi(lead: np.ndarray, komi: np.ndarray, col: np.ndarray) -> np.ndarray:
    """float32: 1 where the player to move (``col`` 0 black, 1 white) wins a
    counted game with Black's board lead ``lead`` (:meth:`GameCache.count_lead`)
    under ``komi``, 0 where it loses, 0.5 for a draw."""
    black = np.where(lead > komi, 1.0, np.where(lead < komi, 0.0, 0.5))
    return np.where(col == 0, black, 1.0 - black).astype(np.float32)


DEFAULT_RANK = 9
DEFAULT_VAL_FRACTION = 0.01
#: a target no loss counts (torch's cross_entropy ignore_index)
IGNORE = -100


class DataError(ValueError):
    """A data directory or cache that cannot be used; the message names it."""


# --------------------------------------------------------------------------
# SGF metadata


def parse_rank(text: str | None) -> int | None:
    """Dan rank 1..9 from a BR/WR value; None when unknown (empty or not
    understood).  Professionals count as 9, kyu players as 1."""
    if not text:
        return None
    t = text.strip().lower().rstrip("?*+ ")
    if not t:
        return None
    if t in ("pro", "professional") or re.fullmatch(r"p\s*\d+\s*(段|단|dan|d)?", t) \
            or re.fullmatch(r"\d+\s*(p|pro)", t):
        return 9
    m = re.fullmatch(r"(\d+)\s*(d|dan|段|단)", t)
    if m:
        return max(1, min(9, int(m.group(1))))
    if re.fullmatch(r"\d+\s*(k|kyu|级|級|급)", t):
        return 1
    return None


def _root_node(data: bytes) -> bytes:
    """The bytes of the first node of the first game tree (up to the second
    ``;`` outside property values)."""
    start = data.find(b";")
    if start < 0:
        return b""
    i, n, inside = start + 1, len(data), False
    while i < n:
        ch = data[i]
        if inside:
            if ch == 0x5C:          # backslash escapes the next byte
                i += 1
            elif ch == 0x5D:        # ]
                inside = False
        elif ch == 0x5B:            # [
            inside = True
        elif ch in (0x3B, 0x28, 0x29):  # ; ( )
            break
        i += 1
    return data[start:i]


_PROP = re.compile(rb"(?<![A-Za-z])(BR|WR)\s*\[((?:[^\]\\]|\\.)*)\]", re.S)


def root_ranks(data: bytes) -> tuple[str, str]:
    """Raw BR and WR values of the root node ('' when absent)."""
    found = {"BR": "", "WR": ""}
    for key, value in _PROP.findall(_root_node(data)):
        k = key.decode()
        if not found[k]:
            found[k] = value.decode("utf-8", errors="replace").strip()
    return found["BR"], found["WR"]


_RESULT = re.compile(r"([BW])\s*\+\s*(.*)", re.S)


def parse_result(text: str | None) -> tuple[int, int, float]:
    """(winner, how, margin) of an SGF ``RE`` value: winner 1 black, 2 white,
    0 none; how one of HOW_*; margin the points of a count (else 0)."""
    m = _RESULT.fullmatch((text or "").strip().upper())
    if not m:
        return 0, HOW_UNKNOWN, 0.0
    winner = 1 if m.group(1) == "B" else 2
    rest = m.group(2).strip()
    if rest.startswith("R"):
        return winner, HOW_RESIGN, 0.0
    if rest.startswith("T"):
        return winner, HOW_TIME, 0.0
    if rest.startswith("F"):
        return winner, HOW_FORFEIT, 0.0
    try:
        margin = float(rest)
    except ValueError:
        return winner, HOW_UNKNOWN, 0.0
    if not math.isfinite(margin) or margin <= 0:
        return winner, HOW_UNKNOWN, 0.0
    return winner, HOW_COUNT, margin


def normalise_komi(komi: float) -> float:
    """Fox's komi encoding to points (see the module docstring)."""
    if abs(komi) >= 100:
        komi = komi / 100.0
        if komi == 3.75:
            komi = 7.5
    return float(komi)


# --------------------------------------------------------------------------
# kernels


@njit(nogil=True, cache=True)
def _first_illegal(b, s, zob, size, moves, colours):
    """Replay a game; the number of its first illegal move, or -1."""
    clear(b, s, size)
    w = size + 2
    nn = size * size
    for t in range(moves.shape[0]):
        m = moves[t]
        c = colours[t]
        if m == nn:
            p = PASS
        else:
            p = (m // size + 1) * w + m % size + 1
            if not is_legal(b, s, p, c):
                return t
        play(b, s, zob, p, c)
    return -1


@njit(nogil=True, cache=True)
def _emit(b, s, sb, ss, zob, size, moves, colours, offsets, ranks, games, picks, pick_start,
          syms, gather, scatter, hist, tmp, tmp_flat, out, y, col):
    """Replay each game of ``games`` once and write the planes of its picked
    positions (move numbers ``picks[pick_start[g]:pick_start[g + 1]]``,
    increasing) under symmetry ``syms[k]`` into ``out[k]`` (flattened
    (planes, N * N)), the transformed move into ``y[k]`` and the colour to
    move (0 black, 1 white) into ``col[k]``.  Returns the count written."""
    w = size + 2
    nn = size * size
    nplanes = tmp.shape[0]
    k = 0
    for gi in range(games.shape[0]):
        g = games[gi]
        a = offsets[g]
        e = offsets[g + 1]
        j = pick_start[gi]
        jend = pick_start[gi + 1]
        if j >= jend:
            continue
        clear(b, s, size)
        for t in range(4):
            hist[t] = PASS
        for t in range(e - a):
            if j >= jend:
                break
            m = moves[a + t]
            c = colours[a + t]
            if picks[j] == t:
                s[S_TO_MOVE] = c
                compute_planes(b, s, zob, hist, ranks[g, c - 1], tmp, sb, ss)
                sy = syms[k]
                for q in range(nn):
                    src = gather[sy, q]
                    for ch in range(nplanes):
                        out[k, ch, q] = tmp_flat[ch, src]
                y[k] = scatter[sy, m]
                col[k] = c - 1
                k += 1
                j += 1
            if m == nn:
                p = PASS
            else:
                p = (m // size + 1) * w + m % size + 1
            play(b, s, zob, p, c)
            hist[3] = hist[2]
            hist[2] = hist[1]
            hist[1] = hist[0]
            hist[0] = p
    return k


# --------------------------------------------------------------------------
# symmetries


def apply_symmetry(t: int, arr: np.ndarray) -> np.ndarray:
    """Symmetry t (0..7) of the board applied to the last two axes of arr:
    a left-right mirror when ``t & 1``, then ``t >> 1`` quarter turns
    (``np.rot90``'s sense).  t = 0 is the identity."""
    if not 0 <= t < 8:
        raise ValueError(f"symmetry {t} outside 0..7")
    if t & 1:
        arr = arr[..., :, ::-1]
    return np.ascontiguousarray(np.rot90(arr, k=t >> 1, axes=(-2, -1)))


def symmetry_tables(size: int) -> tuple[np.ndarray, np.ndarray]:
    """``(gather, scatter)``, int32 of shapes (8, N*N) and (8, N*N + 1):
    transformed_flat[q] = flat[gather[t, q]]; a point index p moves to
    scatter[t, p] (the pass index N*N stays)."""
    nn = size * size
    idx = np.arange(nn, dtype=np.int32).reshape(size, size)
    gather = np.stack([apply_symmetry(t, idx).reshape(-1) for t in range(8)]).astype(np.int32)
    scatter = np.empty((8, nn + 1), np.int32)
    for t in range(8):
        scatter[t, gather[t]] = np.arange(nn, dtype=np.int32)
        scatter[t, nn] = nn
    return gather, scatter


def transform_move(t: int, index: int, size: int) -> int:
    """Point index (or the pass index) after symmetry t."""
    return int(symmetry_tables(size)[1][t, index])


# --------------------------------------------------------------------------
# the cache


@dataclass
class GameCache:
    path: str
    size: int
    moves: np.ndarray
    colours: np.ndarray
    offsets: np.ndarray
    ranks: np.ndarray
    komi: np.ndarray
    val: np.ndarray
    source: np.ndarray
    summary: dict
    winner: np.ndarray
    how: np.ndarray
    margin: np.ndarray

    @property
    def n_games(self) -> int:
        return len(self.offsets) - 1

    def game_moves(self, g: int) -> tuple[np.ndarray, np.ndarray]:
        a, e = self.offsets[g], self.offsets[g + 1]
        return self.moves[a:e], self.colours[a:e]

    def replay(self, g: int, upto: int | None = None):
        """(the engine's Board after the first ``upto`` moves of game ``g``,
        all of them by default; those moves' points, the last first).  Like
        the cache's builder it does not check positional superko, which
        Japanese-rules records may break (a triple ko)."""
        from engine.board import Board

        n = self.size
        board, points = Board(n), []
        moves, colours = self.game_moves(g)
        for m, c in zip(moves[:upto], colours[:upto]):
            p = PASS if m == n * n else board.point(int(m) % n, n - 1 - int(m) // n)
            board.play(p, int(c), superko=False)
            points.append(p)
        return board, points[::-1]

    def split(self) -> tuple[np.ndarray, np.ndarray]:
        """(training game indices, validation game indices)."""
        return np.flatnonzero(~self.val), np.flatnonzero(self.val)

    def positions(self, games=None, passes: bool = False) -> int:
        """Training positions of the given games: their non-pass moves, or
        all their moves with ``passes``."""
        counts = self.position_counts(passes)
        return int(counts.sum() if games is None else counts[games].sum())

    def position_counts(self, passes: bool = False) -> np.ndarray:
        """Positions per game: non-pass moves, or all moves with ``passes``."""
        return np.diff(self.offsets).astype(np.int64) if passes else self.nonpass_counts()

    def game_positions(self, g: int, passes: bool = False) -> np.ndarray:
        """The move numbers of game g that are positions (increasing): the
        non-pass moves, or every move with ``passes``."""
        a, e = self.offsets[g], self.offsets[g + 1]
        if passes:
            return np.arange(e - a)
        return np.flatnonzero(self.moves[a:e] != self.size * self.size)

    def value_games(self) -> np.ndarray:
        """Bool (games,): the games whose result teaches a value net: a
        winner by count or resignation, with a known komi (not 0, Fox's
        "unknown").  Games won on time or by forfeit say little about the
        position and are left out."""
        return ((self.winner > 0) & ((self.how == HOW_COUNT) | (self.how == HOW_RESIGN))
                & (self.komi != 0))

    def count_lead(self) -> np.ndarray:
        """float32 (games,): Black's points minus White's before komi (the
        difference of the area counts) of the value games won by a count, from
        the result and the komi; NaN for every other game.  Under a komi k,
        Black won such a game when its lead is above k."""
        signed = np.where(self.winner == 1, self.margin, -self.margin)
        counted = self.value_games() & (self.how == HOW_COUNT)
        return np.where(counted, signed + self.komi, np.nan).astype(np.float32)

    def with_leads(self, leads: np.ndarray) -> np.ndarray:
        """:meth:`count_lead`, with the estimated leads ``leads`` (games,)
        (:func:`load_leads`; NaN where none) for the games it does not know."""
        lead = self.count_lead()
        return np.where(np.isnan(lead), leads, lead).astype(np.float32)

    def nonpass_counts(self) -> np.ndarray:
        """Non-pass moves per game."""
        counts = getattr(self, "_nonpass", None)
        if counts is None:
            starts, ends = self.offsets[:-1], self.offsets[1:]
            nonempty = ends > starts
            counts = np.zeros(self.n_games, np.int64)
            if nonempty.any():
                sums = np.add.reduceat(self.moves != self.size * self.size,
                                       starts[nonempty], dtype=np.int64)
                counts[nonempty] = sums
            self._nonpass = counts
        return counts


def save_cache(path, *, size: int, games: list[dict], summary: dict) -> None:
    """Write a cache; games: dicts with moves, colours (arrays), ranks
    (black, white), komi, val, source, and winner, how, margin (optional:
    no winner when absent)."""
    lengths = [len(g["moves"]) for g in games]
    offsets = np.zeros(len(games) + 1, np.int64)
    offsets[1:] = np.cumsum(lengths)
    cat = (lambda key, dt: np.concatenate([np.asarray(g[key], dt) for g in games])
           if games else np.zeros(0, dt))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp{os.getpid()}.npz")
    np.savez_compressed(
        tmp,
        format=np.array(FORMAT), version=np.array(FORMAT_VERSION), size=np.array(size),
        moves=cat("moves", np.int16), colours=cat("colours", np.int8), offsets=offsets,
        ranks=np.array([g["ranks"] for g in games], np.int8).reshape(-1, 2),
        komi=np.array([g["komi"] for g in games], np.float32),
        winner=np.array([g.get("winner", 0) for g in games], np.int8),
        how=np.array([g.get("how", HOW_UNKNOWN) for g in games], np.int8),
        margin=np.array([g.get("margin", 0.0) for g in games], np.float32),
        val=np.array([g["val"] for g in games], bool),
        source=np.array([g["source"].encode("utf-8") for g in games], dtype=np.bytes_)
        if games else np.zeros(0, "S1"),
        summary=np.array(json.dumps(summary, sort_keys=True)))
    os.replace(tmp, path)


def load_cache(path) -> GameCache:
    """Read a cache; DataError names a missing or foreign file."""
    path = str(path)
    if not os.path.isfile(path):
        raise DataError(f"game cache {path} does not exist")
    try:
        with np.load(path, allow_pickle=False) as z:
            if "format" not in z.files or str(z["format"]) != FORMAT:
                raise DataError(f"{path} is not a {FORMAT} cache")
            if int(z["version"]) not in READS_VERSIONS:
                raise DataError(f"cache {path} has version {int(z['version'])}, "
                                f"this program reads {READS_VERSIONS}")
            d = {k: z[k] for k in z.files}
    except DataError:
        raise
    except Exception as e:  # zip/npy errors come in many types
        raise DataError(f"cannot read game cache {path}: {e}") from None
    n = len(d["komi"])
    cache = GameCache(path, int(d["size"]), d["moves"], d["colours"], d["offsets"],
                      d["ranks"], d["komi"], d["val"], d["source"],
                      json.loads(str(d["summary"])),
                      d.get("winner", np.zeros(n, np.int8)),
                      d.get("how", np.full(n, HOW_UNKNOWN, np.int8)),
                      d.get("margin", np.zeros(n, np.float32)))
    if cache.n_games == 0:
        raise DataError(f"game cache {path} holds no games")
    return cache


# --------------------------------------------------------------------------
# building


def find_sgf_files(data_dir) -> list[Path]:
    root = Path(data_dir)
    if not root.exists():
        raise DataError(f"data directory {data_dir} does not exist")
    if not root.is_dir():
        raise DataError(f"{data_dir} is not a directory")
    files = sorted(p for p in root.rglob("*") if p.suffix.lower() == ".sgf" and p.is_file())
    if not files:
        raise DataError(f"no SGF files (*.sgf) under {data_dir}")
    return files


_worker_board: tuple | None = None


def _board_arrays(size: int):
    global _worker_board
    if _worker_board is None or _worker_board[0] != size:
        _worker_board = (size, np.zeros((NROWS, n_points(size)), np.int32),
                         np.zeros(NSCALARS, np.int64))
    return _worker_board[1], _worker_board[2]


def read_game(path: str, size: int = 19) -> tuple[str, dict | None]:
    """("ok", game dict) or (skip reason, None) for one SGF file."""
    from engine import sgf  # sgfmill glue; imported here to keep workers lean

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return f"unreadable file ({e.strerror})", None
    try:
        rec = sgf.parse(data, path)
    except ValueError:
        return "unparsable SGF", None
    if rec.size != size:
        return f"board size {rec.size}", None
    if rec.handicap >= 2:
        return "handicap game", None
    if rec.setup:
        return "setup stones", None
    if not rec.moves:
        return "no moves", None
    n = len(rec.moves)
    moves = np.empty(n, np.int16)
    colours = np.empty(n, np.int8)
    nn = size * size
    for t, (c, v) in enumerate(rec.moves):
        colours[t] = c
        if v is None:
            moves[t] = nn
        else:
            col, row = v
            if not (0 <= col < size and 0 <= row < size):
                return "move off the board", None
            moves[t] = (size - 1 - row) * size + col
    b, s = _board_arrays(size)
    if _first_illegal(b, s, ZOBRIST, size, moves, colours) >= 0:
        return "illegal move", None
    br, wr = root_ranks(data)
    rb, rw = parse_rank(br), parse_rank(wr)
    winner, how, margin = parse_result(rec.result)
    return "ok", {"moves": moves, "colours": colours,
                  "winner": winner, "how": how, "margin": margin,
                  "ranks": (DEFAULT_RANK if rb is None else rb, DEFAULT_RANK if rw is None else rw),
                  "rank_known": (rb is not None, rw is not None),
                  "komi": normalise_komi(rec.komi)}


def _read_job(job):
    path, size = job
    return read_game(path, size)


def is_validation(source: str, fraction: float) -> bool:
    return zlib.crc32(source.encode("utf-8")) / 2.0**32 < fraction


def build_cache(data_dir, out, *, limit: int | None = None,
                val_fraction: float = DEFAULT_VAL_FRACTION, size: int = 19,
                workers: int | None = None, seed: int = 0, log=sys.stderr) -> dict:
    """Build a cache from the SGF files under data_dir; returns the summary
    (also stored in the cache).  DataError for an unusable directory or
    when no game is kept."""
    files = find_sgf_files(data_dir)
    if limit is not None and limit < len(files):
        pick = np.random.default_rng(seed).choice(len(files), size=limit, replace=False)
        files = [files[i] for i in sorted(pick)]
    root = Path(data_dir)
    workers = max(1, workers if workers is not None else (os.cpu_count() or 1))
    jobs = [(str(p), size) for p in files]
    games, skipped = [], Counter()
    t0 = last = time.time()

    def consume(results):
        nonlocal last
        for i, (status, game) in enumerate(results):
            if status != "ok":
                skipped[status] += 1
            else:
                game["source"] = files[i].relative_to(root).as_posix()
                games.append(game)
            now = time.time()
            if log is not None and now - last > 5:
                last = now
                print(f"  {i + 1}/{len(files)} files, {len(games)} games kept "
                      f"({(i + 1) / (now - t0):.0f} files/s)", file=log, flush=True)

    if workers == 1 or len(jobs) < 64:
        consume(_read_job(j) for j in jobs)
    else:
        import multiprocessing as mp
        with mp.get_context("fork").Pool(workers) as pool:
            consume(pool.imap(_read_job, jobs, chunksize=32))
    if not games:
        raise DataError(f"no usable game under {data_dir} "
                        f"(skipped: {dict(skipped) or 'none'})")
    for g in games:
        g["val"] = is_validation(g["source"], val_fraction)
    n_val = sum(g["val"] for g in games)
    if len(games) >= 2 and val_fraction > 0:
        keyed = sorted(games, key=lambda g: zlib.crc32(g["source"].encode("utf-8")))
        if n_val == 0:
            keyed[0]["val"] = True
        elif n_val == len(games):
            keyed[-1]["val"] = False
    unknown = 0
    for g in games:
        unknown += sum(not known for known in g.pop("rank_known"))
    summary = {
        "data_dir": str(data_dir), "size": size, "files": len(files),
        "limit": limit, "seed": seed, "val_fraction": val_fraction,
        "skipped": dict(sorted(skipped.items())),
        "rank_default": DEFAULT_RANK, "ranks_unknown": unknown,
        **game_counts(games, size),
        "seconds": round(time.time() - t0, 1),
    }
    save_cache(out, size=size, games=games, summary=summary)
    return summary


def game_counts(games: list[dict], size: int) -> dict:
    """The summary's counts of a cache's games (dicts as save_cache takes
    them): games, validation games, moves, positions (non-pass moves),
    games per source (the first folder below the folders all games share)
    and the rank histogram."""
    parts = [g["source"].split("/")[:-1] for g in games]
    common = 0
    while all(len(p) > common and p[common] == parts[0][common] for p in parts):
        common += 1
    sources = Counter(p[common] if len(p) > common else "." for p in parts)
    nn = size * size
    return {
        "games": len(games), "val_games": sum(bool(g["val"]) for g in games),
        "moves": int(sum(len(g["moves"]) for g in games)),
        "positions": int(sum(int((g["moves"] != nn).sum()) for g in games)),
        "sources": dict(sorted(sources.items())),
        "rank_histogram": {str(r): int(c) for r, c in sorted(
            Counter(int(x) for g in games for x in g["ranks"]).items())},
        "results": {HOW_NAMES[h]: int(c) for h, c in sorted(
            Counter(int(g.get("how", HOW_UNKNOWN)) for g in games).items())},
    }


def subset_cache(src, out, *, games: int, seed: int = 0) -> dict:
    """Write a cache of ``games`` games drawn at random (seeded) from the
    cache ``src``, each keeping its moves, ranks, komi and side of the
    validation split; returns the new summary.  The way to make a training
    cache that fits a size limit (the GPU machine carries 64 MiB)."""
    cache = load_cache(src)
    if games < 1:
        raise DataError(f"--games must be at least 1, got {games}")
    n = cache.n_games
    pick = (np.arange(n) if games >= n else
            np.sort(np.random.default_rng(seed).choice(n, size=games, replace=False)))
    kept = [dict(zip(("moves", "colours"), cache.game_moves(g)),
                 ranks=tuple(int(r) for r in cache.ranks[g]), komi=float(cache.komi[g]),
                 winner=int(cache.winner[g]), how=int(cache.how[g]),
                 margin=float(cache.margin[g]),
                 val=bool(cache.val[g]), source=cache.source[g].decode("utf-8"))
            for g in pick]
    summary = {**cache.summary, "subset_of": str(src), "subset_seed": seed,
               "files": len(kept), "skipped": {}, **game_counts(kept, cache.size)}
    save_cache(out, size=cache.size, games=kept, summary=summary)
    return summary


def describe(summary: dict) -> str:
    s = summary
    lines = [f"{s['games']} games kept ({s['val_games']} validation) of {s['files']} files, "
             f"{s['moves']} moves, {s['positions']} positions (non-pass moves)",
             f"sources: {s['sources']}",
             f"ranks: {s['rank_histogram']} ({s['ranks_unknown']} unknown -> {s['rank_default']}"
             + (f" in {s['subset_of']}, of which this is a subset)" if "subset_of" in s else ")")]
    if "results" in s:
        lines.append(f"results: {s['results']}")
    if s["skipped"]:
        lines.append(f"skipped {sum(s['skipped'].values())}:")
        lines += [f"  {n:7d}  {why}" for why, n in s["skipped"].items()]
    else:
        lines.append("skipped: none")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# positions


def load_leads(paths, cache: GameCache) -> tuple[np.ndarray, dict]:
    """(leads, counts): float32 (games,) Black's lead on the board before
    komi that the lead lines of ``paths`` (``python -m bench.ownership_labels
    --net CKPT --leads``; one path or several) estimate for the cache's
    value games won by resignation, NaN for the others; and how many lines
    were used, disagreed with the record (left out), were not in the cache,
    or named a game the cache does not hold as a resigned value game (or
    whose lead contradicts the cache's winner).
    Raises DataError naming a file that is not such lines."""
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    index = {s.decode("utf-8"): g for g, s in enumerate(cache.source)}
    resigned = cache.value_games() & (cache.how == HOW_RESIGN)
    leads = np.full(cache.n_games, np.nan, np.float32)
    counts = {"lines": 0, "used": 0, "disagree": 0, "not_in_cache": 0, "not_resigned": 0}
    for path in paths:
        try:
            lines = Path(path).read_text().splitlines()
        except OSError as e:
            raise DataError(f"cannot read the leads file {path}: {e}") from None
        for i, line in enumerate(lines, 1):
            try:
                d = json.loads(line)
                source, agrees = d["source"], d["agrees"]
                lead = float(d["lead"]) if agrees else None
            except (ValueError, KeyError, TypeError):
                raise DataError(f"{path} line {i} is not a lead line (python -m "
                                "bench.ownership_labels --net CKPT --leads)") from None
            counts["lines"] += 1
            g = index.get(source)
            if not agrees:
                counts["disagree"] += 1
            elif g is None:
                counts["not_in_cache"] += 1
            elif not resigned[g] or not math.isfinite(lead) \
                    or (lead > cache.komi[g]) != (cache.winner[g] == 1) or lead == cache.komi[g]:
                counts["not_resigned"] += 1
            else:
                leads[g] = lead
    counts["used"] = int(np.isfinite(leads).sum())
    if not counts["used"]:
        raise DataError(f"no resigned game of the cache {cache.path} has an agreeing lead in "
                        f"{', '.join(map(str, paths))}")
    return leads, counts


class PositionSampler:
    """Batches of (planes, move index, colour) from cached games.

    ``batch(n, step)`` returns ``x`` uint8 (n, N_PLANES, N, N), ``y`` int64
    (n,) point index of the move played (after the symmetry), ``color``
    int64 (n,) 0 black / 1 white to move.  ``positions_per_game`` positions
    are taken from each replayed game (fewer from short games); with
    ``passes`` passes are targets too (a net with a pass output); with
    ``late`` = f, a fraction f of the games drawn give positions from their
    last quarter only (the ownership net, used at game ends); with
    ``komi_spread`` S, the value targets of a batch's step teach other komi
    (:meth:`value_targets`; ``leads``, :func:`load_leads`, adds resigned
    games to the counted ones there).  The batch is a function of ``(seed, stream,
    step)``: ``stream`` separates the processes of a distributed run."""

    def __init__(self, cache: GameCache, games=None, *, positions_per_game: int = 8,
                 symmetries: bool = True, seed: int = 0, stream: int = 0, late: float = 0.0,
                 passes: bool = False, komi_spread: int = 0, leads=None):
        self.cache = cache
        self.komi_spread = int(komi_spread)
        self.leads = leads
        self.size = n = cache.size
        self.passes = bool(passes)
        games = np.arange(cache.n_games) if games is None else np.asarray(games, np.int64)
        counts = cache.position_counts(self.passes)[games]
        keep = counts > 0
        self.games = games[keep]
        if len(self.games) == 0:
            raise DataError(f"no positions in the selected games of {cache.path}")
        self.cum = np.cumsum(counts[keep])
        self.positions = int(self.cum[-1])
        self.k = max(1, int(positions_per_game))
        self.symmetries = symmetries
        self.late = float(late)
        self.seed = int(seed)
        self.stream = int(stream)
        self.gather, self.scatter = symmetry_tables(n)
        self.b = np.zeros((NROWS, n_points(n)), np.int32)
        self.s = np.zeros(NSCALARS, np.int64)
        self.sb, self.ss = make_scratch(n)
        self.hist = np.full(4, PASS, np.int32)
        self.tmp = np.zeros((N_PLANES, n, n), np.uint8)
        # the cache's arrays as they are (no copies: a loader worker shares them)
        self.offsets = cache.offsets
        self.moves = cache.moves
        self.colours = cache.colours
        self.ranks = cache.ranks.astype(np.int64)

    def rng(self, step: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, self.stream, int(step)])

    def plan(self, n: int, rng: np.random.Generator):
        """Which games, which move numbers (sorted per game), which symmetry."""
        games, picks, starts = [], [], [0]
        filled = 0
        while filled < n:
            want = n - filled
            draws = rng.integers(0, self.positions, size=max(1, math.ceil(want / self.k)))
            for u in draws:
                if filled >= n:
                    break
                g = int(self.games[np.searchsorted(self.cum, u, side="right")])
                cand = self.cache.game_positions(g, self.passes)
                if self.late > 0 and rng.random() < self.late:
                    cand = cand[3 * len(cand) // 4:]       # the game's last quarter
                m = min(self.k, len(cand), n - filled)
                chosen = np.sort(rng.choice(cand, size=m, replace=False))
                games.append(g)
                picks.append(chosen)
                filled += m
                starts.append(filled)
        syms = rng.integers(0, 8, size=n) if self.symmetries else np.zeros(n, np.int64)
        return (np.array(games, np.int64), np.concatenate(picks).astype(np.int64),
                np.array(starts, np.int64), syms.astype(np.int64))

    def value_targets(self, games: np.ndarray, col: np.ndarray,
                      step: int | None = None) -> np.ndarray:
        """float32 (n, 3) for positions of ``games`` with ``col`` (0 black,
        1 white) to move: 1 where the player to move won the game, else 0;
        the weight of that target (1, or 0 for a game whose result teaches
        nothing, :meth:`GameCache.value_games`); the game's komi.

        With the sampler's ``komi_spread`` S and a ``step`` (training
        batches; validation keeps the real komi), half of the positions of
        games won by a count, drawn afresh for each step, get another komi:
        the game's plus d, d a whole number drawn uniformly from -S..S, and
        the result the count gives under it (:meth:`GameCache.count_lead`;
        0.5 where it is a draw).  The even games of the records are nearly
        all at komi 6.5, so without this a value head learns little of what
        komi does, which dynamic komi in handicap games asks of it.  Games
        won by resignation keep their komi: how far the loser was behind is
        not known, unless the sampler's ``leads`` estimate it: then their
        positions are drawn and moved the same way, with the estimate."""
        c = self.cache
        if getattr(self, "_value_ok", None) is None:
            self._value_ok = c.value_games().astype(np.float32)
        out = np.empty((len(games), 3), np.float32)
        out[:, 0] = c.winner[games] == col + 1
        out[:, 1] = self._value_ok[games]
        out[:, 2] = c.komi[games]
        if self.komi_spread > 0 and step is not None:
            if getattr(self, "_lead", None) is None:
                self._lead = c.count_lead() if self.leads is None else c.with_leads(self.leads)
            lead = self._lead[games]
            rng = np.random.default_rng([self.seed, self.stream, int(step), KOMI_STREAM])
            d = rng.integers(-self.komi_spread, self.komi_spread + 1, size=len(games))
            moved = np.isfinite(lead) & (rng.random(len(games)) < 0.5)
            komi = out[:, 2] + np.where(moved, d, 0).astype(np.float32)
            out[moved, 0] = won_under_komi(lead[moved], komi[moved], col[moved])
            out[:, 2] = komi
        return out

    def next_targets(self, where: dict, k: int) -> np.ndarray:
        """int64 (n, k): the moves played 1..k moves after each position of
        a batch (``where`` of :meth:`batch`), under the position's symmetry:
        darkforest's extra targets (Tian & Zhu 2015).  ``IGNORE`` where the
        game ends first or the move is a pass."""
        nn = self.size * self.size
        games, moves, syms = where["game"], where["move"], where["sym"]
        start = self.offsets[games]
        length = self.offsets[games + 1] - start
        out = np.full((len(games), k), IGNORE, np.int64)
        for j in range(1, k + 1):
            ok = moves + j < length
            m = np.where(ok, self.moves[np.where(ok, start + moves + j, 0)], nn)
            ok &= m < nn
            out[ok, j - 1] = self.scatter[syms[ok], m[ok]]
        return out

    def batch(self, n: int, step: int = 0, info: bool = False):
        """(x, y, color); with info=True also a dict of arrays ``game``,
        ``move`` (move number in the game) and ``sym`` per position."""
        games, picks, starts, syms = self.plan(n, self.rng(step))
        size = self.size
        out = np.empty((n, N_PLANES, size * size), np.uint8)
        y = np.empty(n, np.int64)
        col = np.empty(n, np.int64)
        k = _emit(self.b, self.s, self.sb, self.ss, ZOBRIST, size, self.moves, self.colours,
                  self.offsets, self.ranks, games, picks, starts, syms, self.gather,
                  self.scatter, self.hist, self.tmp, self.tmp.reshape(N_PLANES, -1), out, y, col)
        assert k == n, (k, n)
        x = out.reshape(n, N_PLANES, size, size)
        if info:
            where = {"game": np.repeat(games, np.diff(starts)), "move": picks, "sym": syms}
            return x, y, col, where
        return x, y, col


def fixed_positions(cache: GameCache, games, n: int, seed: int = 12345, passes: bool = False,
                    values: bool = False, owners=None):
    """A fixed set of n positions (no symmetry), e.g. for validation:
    (x, y, color), and the value targets (:meth:`PositionSampler.value_targets`)
    with ``values``, then the ownership targets and their weights with
    ``owners`` (a :class:`nets.ownership.OwnerTargets`)."""
    sampler = PositionSampler(cache, games, positions_per_game=4, symmetries=False,
                              seed=seed, stream=1 << 20, passes=passes)
    x, y, c, where = sampler.batch(min(n, sampler.positions), 0, info=True)
    if not values:
        return x, y, c
    out = (x, y, c, sampler.value_targets(where["game"], c))
    return out + owners(where, c) if owners is not None else out


try:
    import torch
    from torch.utils.data import IterableDataset, get_worker_info
except ImportError:  # the cache builder runs without torch
    torch = None
    IterableDataset = object


class PositionDataset(IterableDataset):
    """An endless stream of ready-made batches ``(x uint8, y, color)`` as
    torch tensors (with ``values``, a fourth: the value targets of
    :meth:`PositionSampler.value_targets`, other komi among them with
    ``komi_spread``; with ``owners`` as well, a fifth
    and a sixth: the ownership targets and their weights, see
    :class:`nets.ownership.OwnerTargets`; with ``next_moves`` k, y is
    (batch, 1 + k): the move played, then :meth:`PositionSampler.next_targets`),
    for ``DataLoader(dataset,
    batch_size=None, num_workers=W)``: batch number ``start_step + i`` comes
    i-th whatever the number of workers (worker w makes the batches i = w
    mod W, and the DataLoader takes one from each worker in turn)."""

    def __init__(self, cache: GameCache, games, batch_size: int, *, start_step: int = 0,
                 positions_per_game: int = 8, symmetries: bool = True, seed: int = 0,
                 stream: int = 0, passes: bool = False, values: bool = False,
                 owners=None, next_moves: int = 0, komi_spread: int = 0, leads=None):
        self.cache, self.games, self.batch_size = cache, games, batch_size
        self.start_step = start_step
        self.values = values
        self.owners = owners
        self.next_moves = int(next_moves)
        self.kw = dict(positions_per_game=positions_per_game, symmetries=symmetries,
                       seed=seed, stream=stream, passes=passes, komi_spread=komi_spread,
                       leads=leads)

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (0, 1) if info is None else (info.id, info.num_workers)
        sampler = PositionSampler(self.cache, self.games, **self.kw)
        step = self.start_step + wid
        while True:
            x, y, c, where = sampler.batch(self.batch_size, step, info=True)
            if self.next_moves:
                y = np.concatenate([y[:, None], sampler.next_targets(where, self.next_moves)], 1)
            batch = (torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(c))
            if self.values:
                batch += (torch.from_numpy(sampler.value_targets(where["game"], c, step)),)
                if self.owners is not None:
                    batch += tuple(torch.from_numpy(a) for a in self.owners(where, c))
            yield batch
            step += nw


# --------------------------------------------------------------------------
# command line


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m nets.data", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="SGF directory -> game cache (.npz)")
    b.add_argument("data_dir")
    b.add_argument("out")
    b.add_argument("--limit", type=int, default=None, help="read at most N files (random subset)")
    b.add_argument("--val-fraction", type=float, default=DEFAULT_VAL_FRACTION)
    b.add_argument("--size", type=int, default=19)
    b.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    b.add_argument("--seed", type=int, default=0, help="seed of the --limit subset")
    u = sub.add_parser("subset", help="a random subset of a cache's games -> a smaller cache")
    u.add_argument("cache")
    u.add_argument("out")
    u.add_argument("--games", type=int, required=True, help="games to keep")
    u.add_argument("--seed", type=int, default=0)
    i = sub.add_parser("info", help="print a cache's summary")
    i.add_argument("cache")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "build":
            if args.limit is not None and args.limit < 1:
                raise DataError("--limit must be at least 1")
            summary = build_cache(args.data_dir, args.out, limit=args.limit,
                                  val_fraction=args.val_fraction, size=args.size,
                                  workers=args.workers, seed=args.seed)
            print(describe(summary))
            print(f"wrote {args.out} ({os.path.getsize(args.out) / 1e6:.1f} MB, "
                  f"{summary['seconds']} s)")
        elif args.cmd == "subset":
            print(describe(subset_cache(args.cache, args.out, games=args.games,
                                        seed=args.seed)))
            print(f"wrote {args.out} ({os.path.getsize(args.out) / 1e6:.1f} MB)")
        else:
            print(describe(load_cache(args.cache).summary))
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
