"""Light random playouts per second on one thread, from the empty board.

    python -m bench.playouts [--seconds S] [--json FILE]

Light playouts: uniformly random legal moves, never filling one's own
single-point eye, until both sides pass.  Compile time is excluded (one
warm-up call first)."""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

from engine.board import ZOBRIST, Board
from engine.playout import run_light_playouts


def measure(size: int, seconds: float, seed: int = 1) -> dict:
    board = Board(size)
    b, s = board.b.copy(), board.s.copy()
    rng = np.array([seed], np.uint64)
    run_light_playouts(board.b, board.s, ZOBRIST, rng, 2, b, s)  # compile / warm up
    done, total, batch = 0, 0, 200
    started = time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        total += run_light_playouts(board.b, board.s, ZOBRIST, rng, batch, b, s)
        done += batch
    return {"size": size, "playouts": done, "seconds": round(elapsed, 3),
            "playouts_per_s": round(done / elapsed), "mean_score_black": round(total / done, 2)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=5.0, help="time per board size")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    if not 0 < args.seconds < math.inf:
        ap.error("--seconds must be positive")
    rows = [measure(n, args.seconds) for n in (9, 19)]
    print(f"{'board':>6} {'playouts':>9} {'seconds':>8} {'playouts/s':>11} {'mean B-W':>9}")
    for r in rows:
        print(f"{r['size']:>4}x{r['size']:<2} {r['playouts']:>8} {r['seconds']:>8} "
              f"{r['playouts_per_s']:>11,} {r['mean_score_black']:>9}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
