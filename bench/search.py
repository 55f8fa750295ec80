"""Full-search and pattern-rollout speed, from the empty board.

    python -m bench.search [--seconds S] [--threads 1,2,4] [--sizes 9,19] [--json FILE]

Two tables:

* full search: simulations per second of :class:`engine.search.Search`
  (tree descent, expansion with priors, pattern-policy rollout, scoring and
  RAVE backup) searching the empty 9x9 and 19x19 board for ``--seconds``,
  for each thread count, with the speed-up relative to one thread.  The
  search's early stop ("the best move can no longer be overtaken") is turned
  off here so that every measurement lasts the full time;
* rollouts only: pattern-policy playouts (:func:`engine.playout.policy_playout`,
  the policy the search uses) from the empty board on one thread, playouts
  per second and moves per playout.

Compile time is excluded: every kernel is run once (a short warm-up) before
anything is timed.  Default threads: 1, 2, 4, ... up to ``os.cpu_count()``
(and ``os.cpu_count()`` itself).  Numbers depend on whatever else runs on
the machine; the header says which machine and command produced them.
"""

from __future__ import annotations

import argparse
import math
import json
import os
import platform
import sys
import time

import numpy as np
from numba import njit

from engine.board import (MAX_SIZE, NROWS, NSCALARS, S_W, ZOBRIST, Board,
                          copy_board, n_points)
from engine.config import SearchConfig
from engine.patterns import load_gammas
from engine.playout import PlayoutScratch, playout_params, policy_playout
from engine.search import Search


class _TimedSearch(Search):
    """A Search that never stops early: runs until its time is up."""

    def _decided(self, *args) -> bool:
        return False


def default_threads() -> list[int]:
    n = os.cpu_count() or 1
    out, t = [], 1
    while t < n:
        out.append(t)
        t *= 2
    out.append(n)
    return out


def measure_search(size: int, threads: int, seconds: float, gammas: np.ndarray,
                   cfg: SearchConfig, komi: float = 7.5, seed: int = 1) -> dict:
    search = _TimedSearch(cfg, gammas, threads=threads, seed=seed)
    result = search.run(Board(size), komi, seconds=seconds)
    return {"size": size, "threads": threads, "sims": result.sims,
            "seconds": round(result.seconds, 3), "sims_per_s": round(result.sims_per_s, 1),
            "nodes": result.nodes}


@njit(nogil=True, cache=True)
def _policy_batch(b0, s0, zob, rng, n, gammas, pp, cand, wts, lb, ls, seq, b, s):
    """n pattern-policy playouts from (b0, s0); returns the moves played."""
    w = s0[S_W]
    npts = w * w
    moves = 0
    for _ in range(n):
        copy_board(b0, s0, b, s)
        moves += policy_playout(b, s, zob, rng, 3 * npts, gammas, pp,
                                cand, wts, lb, ls, seq, 0)
    return moves


def measure_rollouts(size: int, seconds: float, gammas: np.ndarray, cfg: SearchConfig,
                     seed: int = 1) -> dict:
    board = Board(size)
    mp = n_points(MAX_SIZE)
    b = np.zeros((NROWS, mp), np.int32)
    s = np.zeros(NSCALARS, np.int64)
    rng = np.array([seed * 0x9E3779B97F4A7C15 % 2**64 | 1], np.uint64)
    ps = PlayoutScratch(mp)
    seq = np.zeros(4 * mp, np.int32)
    args = (ZOBRIST, rng)
    tail = (gammas, playout_params(cfg), ps.cand, ps.wts, ps.lb, ps.ls, seq, b, s)
    _policy_batch(board.b, board.s, *args, 2, *tail)        # warm-up / compile
    batch = 50 if size <= 9 else 10
    done = moves = 0
    started = time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        moves += _policy_batch(board.b, board.s, *args, batch, *tail)
        done += batch
    return {"size": size, "playouts": done, "seconds": round(elapsed, 3),
            "playouts_per_s": round(done / elapsed, 1),
            "moves_per_playout": round(moves / max(done, 1), 1)}


def warm_up(gammas: np.ndarray, cfg: SearchConfig) -> float:
    """Compile (or load from numba's cache) every timed kernel."""
    started = time.perf_counter()
    for size in (9, 19):
        Search(cfg, gammas, threads=1, seed=1).run(Board(size), 7.5, max_sims=64)
    return time.perf_counter() - started


def parse_list(text: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text!r}")
    if not out or any(x < 1 for x in out):
        raise argparse.ArgumentTypeError(f"need positive integers: {text!r}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.search", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=5.0,
                    help="time of each measurement (default %(default)s)")
    ap.add_argument("--threads", type=parse_list, default=None,
                    help="comma-separated thread counts (default: 1,2,4,... up to os.cpu_count())")
    ap.add_argument("--sizes", type=parse_list, default=[9, 19],
                    help="comma-separated board sizes (default 9,19)")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    if not 0 < args.seconds < math.inf:
        ap.error("--seconds must be positive")
    if any(not 2 <= n <= MAX_SIZE for n in args.sizes):
        ap.error(f"--sizes must be between 2 and {MAX_SIZE}")
    threads = args.threads or default_threads()
    cfg = SearchConfig()
    gammas = load_gammas()

    cpus = os.cpu_count()
    command = "python -m bench.search " + " ".join(sys.argv[1:] if argv is None else argv)
    print(f"# bench.search  {time.strftime('%Y-%m-%d %H:%M:%S')}")
    print(f"# machine: {platform.node()}  {platform.machine()}  os.cpu_count()={cpus}  "
          f"python {platform.python_version()}")
    print(f"# command: {command.strip()}")
    print(f"# {args.seconds:g} s per measurement, empty board, komi 7.5, SearchConfig defaults "
          f"(batch {cfg.batch}, max_memory {cfg.max_memory:,} bytes)")
    compile_s = warm_up(gammas, cfg)
    print(f"# warm-up (compile or cache load, not timed): {compile_s:.1f} s")
    if max(threads) > (cpus or 1):
        print(f"# note: more threads than CPUs ({cpus}); speed-ups past that mean nothing")
    print(flush=True)

    print("full search (tree + rollouts)")
    print(f"{'board':>6} {'threads':>7} {'sims':>9} {'seconds':>8} {'sims/s':>10} "
          f"{'x 1 thread':>10} {'nodes':>9}")
    search_rows = []
    for size in args.sizes:
        base = None
        for t in threads:
            r = measure_search(size, t, args.seconds, gammas, cfg)
            if t == 1:
                base = r["sims_per_s"]
            r["scaling"] = round(r["sims_per_s"] / base, 2) if base else None
            search_rows.append(r)
            scaling = f"{r['scaling']:.2f}" if r["scaling"] is not None else "-"
            print(f"{size:>4}x{size:<2} {t:>7} {r['sims']:>9,} {r['seconds']:>8.2f} "
                  f"{r['sims_per_s']:>10,.0f} {scaling:>10} {r['nodes']:>9,}", flush=True)
    print()
    print("rollouts only (pattern policy, 1 thread)")
    print(f"{'board':>6} {'playouts':>9} {'seconds':>8} {'playouts/s':>11} {'moves/playout':>14}")
    rollout_rows = []
    for size in args.sizes:
        r = measure_rollouts(size, args.seconds, gammas, cfg)
        rollout_rows.append(r)
        print(f"{size:>4}x{size:<2} {r['playouts']:>9,} {r['seconds']:>8.2f} "
              f"{r['playouts_per_s']:>11,.0f} {r['moves_per_playout']:>14}", flush=True)
    if args.json:
        out = {"command": command.strip(), "cpu_count": cpus, "host": platform.node(),
               "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "seconds": args.seconds,
               "warm_up_s": round(compile_s, 2), "search": search_rows,
               "rollouts": rollout_rows}
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
