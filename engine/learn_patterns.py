"""Learn the 3x3 pattern weights from game records.

    python -m engine.learn_patterns DATA_DIR [--games N] [--holdout M]
        [--out engine/data/patterns.npz] [--iterations K] [--seed S]

Every SGF file under DATA_DIR (recursively, sorted, then shuffled with the
seed) is a candidate; the first N are the training games and the next M
(default N/10) are held out for evaluation.  Each game is replayed on the
engine's board; every move (not a pass) is one Bradley-Terry competition
between all the candidate points of that position: empty, legal for the
mover and not filling one of the mover's single-point eyes
(``engine.board.is_eyeish``).  A decision is stored sparsely as the list of
(pattern class, number of candidates of that class) pairs plus the class of
the chosen point.

The weights are fitted by minorization-maximization (Hunter 2004; Coulom
2007).  With one feature per candidate the update is

    gamma_i <- (W_i + 1) / (sum_j C_ij / E_j + 2 / (gamma_i + 1))

with W_i the wins of class i, C_ij its number of candidates in decision j,
E_j = sum_i C_ij gamma_i, and the prior of one virtual win and one virtual
loss against an opponent of gamma 1 (the "+1" and "2/(gamma_i+1)" terms),
which keeps rare classes finite.  Afterwards the weights are scaled so that
the empty 3x3 neighbourhood (code 0) has gamma 1; codes never seen get
``engine.patterns.DEFAULT_GAMMA``.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

from engine import sgf
from engine.board import (COLOR, EMPTIES, EMPTY, PASS, S_NEMPTY, ZOBRIST, Board,
                          IllegalMove, is_eyeish, is_legal, play)
from engine.patterns import (DATA_PATH, DEFAULT_GAMMA, N_CODES, PATTERN_VERSION,
                             canonical_table, pattern_code)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Collecting the competitions


@njit(nogil=True, cache=True)
def collect_game(b, s, zob, canon, pts, cols, cnt, touched, out_cls, out_cnt, out_ptr, out_win):
    """Replay the moves (pts[i] by colour cols[i]; PASS for a pass) on
    (b, s) and record one competition per move: the canonical pattern
    classes of all candidates with their counts (out_cls/out_cnt, decision
    j spanning out_ptr[j]..out_ptr[j+1]) and the chosen class (out_win[j]).
    ``cnt`` is an all-zero int32 scratch of N_CODES entries (left zero) and
    ``touched`` a scratch of at least as many entries as board points.

    Returns (decisions, entries, moves replayed); the replay stops at the
    first move that is illegal on this board.  A move that fills the
    mover's own eye is played but not recorded (it is no candidate)."""
    nd = 0
    ne = 0
    out_ptr[0] = 0
    n = len(pts)
    for i in range(n):
        p = pts[i]
        c = cols[i]
        if p == PASS:
            play(b, s, zob, PASS, c)
            continue
        if b[COLOR, p] != EMPTY or not is_legal(b, s, p, c):
            return nd, ne, i
        nt = 0
        found = False
        for e in range(s[S_NEMPTY]):
            q = b[EMPTIES, e]
            if not is_legal(b, s, q, c) or is_eyeish(b, s, q, c):
                continue
            k = canon[pattern_code(b, s, q, c)]
            if cnt[k] == 0:
                touched[nt] = k
                nt += 1
            cnt[k] += 1
            if q == p:
                found = True
        if found:
            out_win[nd] = canon[pattern_code(b, s, p, c)]
            for t in range(nt):
                out_cls[ne] = touched[t]
                out_cnt[ne] = cnt[touched[t]]
                ne += 1
            nd += 1
            out_ptr[nd] = ne
        for t in range(nt):
            cnt[touched[t]] = 0
        play(b, s, zob, p, c)
    return nd, ne, n


class Competitions:
    """The decisions of a set of games, in canonical-code space."""

    def __init__(self):
        self.cls_parts: list[np.ndarray] = []
        self.cnt_parts: list[np.ndarray] = []
        self.len_parts: list[np.ndarray] = []
        self.win_parts: list[np.ndarray] = []
        self.games = 0
        self.skipped = 0        # unreadable files
        self.truncated = 0      # games cut at an illegal move

    def finish(self):
        """Flat arrays: cls (int32 canonical codes), cnt (int32), ptr
        (int64 decision starts, one more than decisions), win (int32)."""
        cat = (lambda parts, dt: np.concatenate(parts).astype(dt, copy=False)
               if parts else np.zeros(0, dt))
        self.cls = cat(self.cls_parts, np.int32)
        self.cnt = cat(self.cnt_parts, np.int32)
        lens = cat(self.len_parts, np.int64)
        self.win = cat(self.win_parts, np.int32)
        self.ptr = np.zeros(len(lens) + 1, np.int64)
        np.cumsum(lens, out=self.ptr[1:])
        del self.cls_parts, self.cnt_parts, self.len_parts, self.win_parts
        return self

    @property
    def decisions(self) -> int:
        return len(self.win)


def game_arrays(record: sgf.SgfRecord):
    """A board with the setup stones and the move list as arrays."""
    board = Board(record.size)
    for colour, v in record.setup:
        board.place(board.point(*v), colour)
    board.to_move = record.to_move
    pts = np.array([PASS if v is None else board.point(*v) for _, v in record.moves], np.int64)
    cols = np.array([c for c, _ in record.moves], np.int64)
    return board, pts, cols


def collect(paths: list[str], label: str) -> Competitions:
    comp = Competitions()
    canon = canonical_table()
    cnt = np.zeros(N_CODES, np.int32)
    touched = np.zeros(N_CODES, np.int32)
    t0 = time.time()
    ndec = 0
    for gi, path in enumerate(paths):
        try:
            record = sgf.load(path)
            board, pts, cols = game_arrays(record)
        except (ValueError, IllegalMove, IndexError) as e:
            comp.skipped += 1
            log(f"  skipping {path}: {e}")
            continue
        npts = record.size * record.size
        cap = len(pts) * npts
        out_cls = np.empty(cap, np.int32)
        out_cnt = np.empty(cap, np.int32)
        out_ptr = np.empty(len(pts) + 1, np.int64)
        out_win = np.empty(len(pts), np.int32)
        nd, ne, played = collect_game(board.b, board.s, ZOBRIST, canon, pts, cols, cnt,
                                      touched, out_cls, out_cnt, out_ptr, out_win)
        if played < len(pts):
            comp.truncated += 1
        comp.games += 1
        comp.cls_parts.append(out_cls[:ne].copy())
        comp.cnt_parts.append(out_cnt[:ne].copy())
        comp.len_parts.append(np.diff(out_ptr[: nd + 1]))
        comp.win_parts.append(out_win[:nd].copy())
        ndec += nd
        if (gi + 1) % 250 == 0 or gi + 1 == len(paths):
            log(f"  {label}: {gi + 1}/{len(paths)} games, {ndec} positions, "
                f"{time.time() - t0:.1f}s")
    return comp.finish()


# --------------------------------------------------------------------------
# Minorization-maximization


@njit(nogil=True, cache=True)
def mm_step(ptr, cls, cnt, win, wins, gamma, new_gamma, denom):
    """One MM update of gamma into new_gamma (cls are dense class ids;
    denom is scratch).  Returns the data log-likelihood at gamma."""
    k = len(gamma)
    for i in range(k):
        denom[i] = 0.0
    ll = 0.0
    for j in range(len(win)):
        e_sum = 0.0
        for e in range(ptr[j], ptr[j + 1]):
            e_sum += cnt[e] * gamma[cls[e]]
        ll += math.log(gamma[win[j]]) - math.log(e_sum)
        inv = 1.0 / e_sum
        for e in range(ptr[j], ptr[j + 1]):
            denom[cls[e]] += cnt[e] * inv
    for i in range(k):
        new_gamma[i] = (wins[i] + 1.0) / (denom[i] + 2.0 / (gamma[i] + 1.0))
    return ll


def log_prior(gamma: np.ndarray) -> float:
    """One virtual win and one virtual loss against a gamma-1 opponent."""
    return float(np.sum(np.log(gamma) - 2.0 * np.log1p(gamma)))


def fit(comp: Competitions, iterations: int, tol: float = 1e-6):
    """Fit the gammas of the classes seen in comp by MM.  Returns (codes,
    gammas, history) with codes the canonical codes in ascending order and
    history the data log-likelihood before each iteration and at the end."""
    seen = np.zeros(N_CODES, bool)
    seen[comp.cls] = True
    codes = np.flatnonzero(seen).astype(np.int32)
    ids = np.full(N_CODES, -1, np.int32)
    ids[codes] = np.arange(len(codes), dtype=np.int32)
    cls = ids[comp.cls]
    win = ids[comp.win]
    wins = np.bincount(win, minlength=len(codes)).astype(np.float64)
    gamma = np.ones(len(codes))
    # The empty neighbourhood (code 0, the commonest candidate) is the
    # reference: its gamma stays 1, so the prior pulls rare classes towards
    # the weight of a plain empty point.  (The likelihood alone is scale
    # free; fixing one gamma keeps every MM step a valid minorization.)
    anchor = int(ids[0])
    new_gamma = np.empty_like(gamma)
    denom = np.empty_like(gamma)
    nd = max(comp.decisions, 1)
    history = []
    prev = -math.inf
    for it in range(iterations):
        t0 = time.time()
        ll = mm_step(comp.ptr, cls, comp.cnt, win, wins, gamma, new_gamma, denom)
        post = ll + log_prior(gamma)
        history.append(ll)
        log(f"  iteration {it:3d}: log-likelihood {ll:.1f} ({ll / nd:.4f} per move), "
            f"with prior {post:.1f}  [{time.time() - t0:.2f}s]")
        if anchor >= 0:
            new_gamma[anchor] = 1.0
        gamma, new_gamma = new_gamma, gamma
        if post - prev < tol * nd:
            break
        prev = post
    ll = mm_step(comp.ptr, cls, comp.cnt, win, wins, gamma, new_gamma, denom)
    history.append(ll)
    log(f"  final: log-likelihood {ll:.1f} ({ll / nd:.4f} per move)")
    return codes, gamma, history


# --------------------------------------------------------------------------
# Evaluation


@njit(nogil=True, cache=True)
def evaluate(ptr, cls, cnt, win, g_class):
    """(sum of log-likelihoods, expected top-1 hits, uniform log-likelihood,
    uniform hits) of the decisions under the per-canonical-code weights
    g_class.  Ties for the top weight share the hit."""
    ll = 0.0
    hits = 0.0
    ull = 0.0
    uhits = 0.0
    for j in range(len(win)):
        e_sum = 0.0
        top = 0.0
        n = 0
        for e in range(ptr[j], ptr[j + 1]):
            g = g_class[cls[e]]
            e_sum += cnt[e] * g
            n += cnt[e]
            if g > top:
                top = g
        ntop = 0
        for e in range(ptr[j], ptr[j + 1]):
            if g_class[cls[e]] == top:
                ntop += cnt[e]
        gw = g_class[win[j]]
        ll += math.log(gw) - math.log(e_sum)
        if gw == top:
            hits += 1.0 / ntop
        ull -= math.log(n)
        uhits += 1.0 / n
    return ll, hits, ull, uhits


def class_table(codes: np.ndarray, gammas: np.ndarray, default: float) -> np.ndarray:
    g = np.full(N_CODES, default, np.float64)
    g[codes] = gammas
    return g


# --------------------------------------------------------------------------
# Command line


def find_games(data_dir: str) -> list[str]:
    root = Path(data_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"data directory {data_dir} does not exist or is not a directory")
    files = sorted(str(p) for p in root.rglob("*") if p.suffix.lower() == ".sgf" and p.is_file())
    if not files:
        raise FileNotFoundError(f"data directory {data_dir} holds no .sgf files")
    return files


def split_games(files: list[str], games: int, holdout: int | None, seed: int):
    order = np.random.default_rng(seed).permutation(len(files))
    shuffled = [files[i] for i in order]
    if holdout is None:
        holdout = max(1, games // 10)
    if len(shuffled) >= games + holdout:
        return shuffled[:games], shuffled[games: games + holdout]
    # Too few files: keep about a tenth of what there is for evaluation.
    n = len(shuffled)
    held = min(holdout, n // 10 if n >= 10 else (1 if n >= 2 else 0))
    return shuffled[: n - held], shuffled[n - held:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m engine.learn_patterns",
                                 description="Learn 3x3 pattern gammas from SGF games.")
    ap.add_argument("data_dir", help="directory searched recursively for .sgf files")
    ap.add_argument("--games", type=int, default=2000, help="training games (default 2000)")
    ap.add_argument("--holdout", type=int, default=None,
                    help="held-out games for evaluation (default games/10)")
    ap.add_argument("--out", default=str(DATA_PATH), help="output .npz (default the shipped table)")
    ap.add_argument("--iterations", type=int, default=100, help="maximum MM iterations")
    ap.add_argument("--seed", type=int, default=1, help="shuffle seed")
    args = ap.parse_args(argv)
    if args.games < 1 or args.iterations < 1:
        ap.error("--games and --iterations must be positive")

    t_start = time.time()
    try:
        files = find_games(args.data_dir)
    except FileNotFoundError as e:
        print(f"learn_patterns: error: {e}", file=sys.stderr)
        return 2
    train_files, held_files = split_games(files, args.games, args.holdout, args.seed)
    log(f"{len(files)} SGF files under {args.data_dir}; training on {len(train_files)}, "
        f"holding out {len(held_files)} (seed {args.seed})")

    log("collecting training competitions")
    train = collect(train_files, "train")
    if train.decisions == 0:
        print(f"learn_patterns: error: no usable moves in the games under {args.data_dir}",
              file=sys.stderr)
        return 2
    log(f"  {train.decisions} positions, {len(train.cls)} (class, count) entries, "
        f"{train.skipped} unreadable files, {train.truncated} games cut at an illegal move")

    log(f"fitting (at most {args.iterations} MM iterations)")
    codes, gamma, history = fit(train, args.iterations)
    gamma = gamma.astype(np.float32)
    default = np.float32(DEFAULT_GAMMA)

    train_ll, train_hits, _, _ = evaluate(train.ptr, train.cls, train.cnt, train.win,
                                          class_table(codes, gamma, default))
    results = {"train_top1": train_hits / train.decisions,
               "train_mean_ll": train_ll / train.decisions}
    if held_files:
        log("collecting held-out competitions")
        held = collect(held_files, "held-out")
    else:
        held = None
    if held is not None and held.decisions:
        ll, hits, ull, uhits = evaluate(held.ptr, held.cls, held.cnt, held.win,
                                        class_table(codes, gamma, default))
        results.update(heldout_games=held.games, heldout_positions=held.decisions,
                       heldout_top1=hits / held.decisions, heldout_mean_ll=ll / held.decisions,
                       uniform_top1=uhits / held.decisions, uniform_mean_ll=ull / held.decisions)

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = dict(
        version=np.int32(PATTERN_VERSION),
        games=np.int64(train.games),
        positions=np.int64(train.decisions),
        date=np.str_(datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")),
        default_gamma=default,
        iterations=np.int32(len(history) - 1),
        seed=np.int64(args.seed),
        source=np.str_(args.data_dir),
        train_log_likelihood=np.float64(history[-1]),
    )
    for k, v in results.items():
        meta[k] = np.int64(v) if isinstance(v, int) else np.float64(v)
    np.savez_compressed(out, codes=codes, gammas=gamma, **meta)
    size = os.path.getsize(out)

    print(f"training games {train.games}, positions {train.decisions}, "
          f"classes {len(codes)}, MM iterations {len(history) - 1}")
    print(f"log-likelihood per move: {history[0] / train.decisions:.4f} (uniform) -> "
          f"{history[-1] / train.decisions:.4f} (fitted); "
          f"train top-1 {results['train_top1']:.4f}")
    if "heldout_top1" in results:
        print(f"held-out games {results['heldout_games']}, positions {results['heldout_positions']}: "
              f"top-1 accuracy {results['heldout_top1']:.4f} (uniform {results['uniform_top1']:.4f}), "
              f"mean log-likelihood {results['heldout_mean_ll']:.4f} "
              f"(uniform {results['uniform_mean_ll']:.4f})")
    else:
        print("held-out: no games to evaluate on")
    print(f"wrote {out} ({size} bytes) in {time.time() - t_start:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
