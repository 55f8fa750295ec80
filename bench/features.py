"""Speed of the input planes: ``python -m bench.features``.

Prints microseconds per position of :func:`engine.features.compute_planes`
on random mid-game positions (random legal moves that fill no own eye,
until about 55% of the board holds stones: ~200 stones on 19x19), after a
warm-up call so that compile time is excluded.  One thread, one core.

The positions are visited in turn, so caches and branch predictors do not
learn one position; the time is this thread's CPU time (so that other
processes on a busy machine do not count), best of ``--reps`` rounds.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from engine.board import (BLACK, COLOR, NROWS, NSCALARS, PASS, S_NEMPTY, S_TO_MOVE,
                          WHITE, ZOBRIST, clear, n_points, play)
from engine.features import N_PLANES, compute_planes, make_scratch
from engine.playout import random_move


def random_position(size: int, fill: float, rng: np.random.Generator):
    """(b, s, history) after random moves until ``fill`` of the board is
    stones (or two passes); history holds the last four moves, newest first."""
    b = np.zeros((NROWS, n_points(size)), np.int32)
    s = np.zeros(NSCALARS, np.int64)
    clear(b, s, size)
    state = np.array([rng.integers(1, 2**63)], np.uint64)
    moves: list[int] = []
    target = int(fill * size * size)
    while size * size - s[S_NEMPTY] < target:
        c = int(s[S_TO_MOVE])
        p = int(random_move(b, s, state, c, 0))
        play(b, s, ZOBRIST, p, c)
        moves.append(p)
        if p == PASS and len(moves) > 1 and moves[-2] == PASS:
            break
    history = np.array((moves[::-1] + [PASS] * 4)[:4], np.int32)
    return b, s, history


def bench(size: int, n_positions: int, reps: int, seed: int = 1) -> dict:
    """CPU and wall microseconds per position (best of reps rounds over the
    positions), and the mean number of stones."""
    rng = np.random.default_rng(seed)
    positions = [random_position(size, 0.55, rng) for _ in range(n_positions)]
    out = np.zeros((N_PLANES, size, size), np.float32)
    sb, ss = make_scratch(size)
    b, s, h = positions[0]
    compute_planes(b, s, ZOBRIST, h, 9, out, sb, ss)  # warm-up (compile)
    cpu = wall = float("inf")
    for _ in range(reps):
        t0, w0 = time.thread_time(), time.perf_counter()
        for b, s, h in positions:
            compute_planes(b, s, ZOBRIST, h, 9, out, sb, ss)
        cpu = min(cpu, time.thread_time() - t0)
        wall = min(wall, time.perf_counter() - w0)
    n_stones = np.mean([np.isin(b[COLOR], (BLACK, WHITE)).sum() for b, _, _ in positions])
    return {"cpu_us": cpu / n_positions * 1e6, "wall_us": wall / n_positions * 1e6,
            "stones": float(n_stones)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=200)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    for size in (9, 19):
        r = bench(size, args.positions, args.reps)
        print(f"{size}x{size}: {r['cpu_us']:7.2f} us/position "
              f"(wall {r['wall_us']:.2f} us; {N_PLANES} planes, "
              f"~{r['stones']:.0f} stones, best of {args.reps} x {args.positions} positions)")


if __name__ == "__main__":
    main()
