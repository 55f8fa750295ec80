"""The search tree's memory per simulation, 19x19.

    python -m bench.tree_memory [--rollouts 100000] [--threads 1]
        [--max-memory 2G] [--param NAME=VALUE]... [--json FILE]

Two positions, each searched once on a fresh tree to ``--rollouts``
simulations (no early stop, no network), as the engine searches a move:
the empty board, and a middle game (move 120 of a game the search plays
against itself at 100 simulations a move, seed 1, the same on every run
of this version).  For each, a row: simulations, tree nodes and edges at
the end, whether the tree was full (the cap, ``--max-memory`` as the
engine takes it), the pool bytes a simulation (nodes and edges handed out
to the search threads, engine/tree.py's bytes each), and the growth of
this process's resident memory over the search, per simulation.  Resident
memory is read from ``/proc/self/status`` (Linux; elsewhere its column
says ``-``).
``--param`` sets a search constant as the engine's option does (for
example ``expand_visits=2``, the 19x19 default before 2026-11-27); the
middle-game position is the same.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from bench.search import _TimedSearch
from engine.board import Board
from engine.config import SearchConfig, parse_bytes, search_params
from engine.patterns import load_gammas
from engine.search import Search

SIZE = 19
KOMI = 7.5
MIDDLE_MOVES = 120


def rss_bytes() -> int | None:
    """This process's resident memory, or None where /proc is missing."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def middle_game(gammas) -> Board:
    """Move 120 of the search's game against itself at 100 simulations a
    move (seed 1, a small tree): a fixed middle-game position."""
    search = Search(SearchConfig(max_memory=32 << 20), gammas, 1, 1)
    board = Board(SIZE)
    for _ in range(MIDDLE_MOVES):
        move = search.run(board, KOMI, max_sims=100).move
        board.play(move, board.to_move)
        search.clear()
    return board


def measure(board: Board, rollouts: int, threads: int, max_memory: int, gammas,
            params: dict | None = None) -> dict:
    cfg = SearchConfig(max_memory=max_memory, **(params or {}))
    search = _TimedSearch(cfg, gammas, threads, 1)
    search.run(Board(9), KOMI, max_sims=64)      # kernels compiled and warm before timing
    search.clear()
    before = rss_bytes()
    t0 = time.perf_counter()
    result = search.run(board, KOMI, max_sims=rollouts)
    seconds = time.perf_counter() - t0
    after = rss_bytes()
    sims = max(result.sims, 1)
    return {"sims": result.sims, "nodes": result.nodes, "edges": search.tree.edges_used,
            "seconds": round(seconds, 1), "full": search.tree.full,
            "pool_bytes_per_sim": result.tree_bytes / sims,
            "rss_growth_per_sim": None if before is None or after is None
            else (after - before) / sims,
            "rss_after_mib": None if after is None else after / (1 << 20)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.tree_memory",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--rollouts", type=int, default=100_000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-memory", default="2G", help="the tree's cap, as the engine takes it")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="a search constant (SearchConfig), as the engine's --param")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if args.rollouts < 1 or args.threads < 1:
        print("error: --rollouts and --threads must be at least 1", file=sys.stderr)
        return 2
    try:
        max_memory = parse_bytes(args.max_memory)
        SearchConfig(max_memory=max_memory)
    except ValueError as e:
        print(f"error: --max-memory: {e}", file=sys.stderr)
        return 2
    try:
        params = search_params(args.param)
        SearchConfig(max_memory=max_memory, **params)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    gammas = load_gammas()
    positions = [("empty board", Board(SIZE)), (f"move {MIDDLE_MOVES}", middle_game(gammas))]
    print(f"19x19, {args.rollouts:,} simulations, {args.threads} thread(s), cap "
          f"{args.max_memory}, no network"
          + "".join(f", {k} {v}" for k, v in params.items()))
    print("| position | simulations | seconds | tree nodes | tree edges | full "
          "| pool bytes a simulation | resident memory growth a simulation | resident after |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name, board in positions:
        r = measure(board, args.rollouts, args.threads, max_memory, gammas, params)
        rows.append({"position": name, **r})
        growth = "-" if r["rss_growth_per_sim"] is None else f"{r['rss_growth_per_sim']:,.0f} B"
        after = "-" if r["rss_after_mib"] is None else f"{r['rss_after_mib']:,.0f} MiB"
        print(f"| {name} | {r['sims']:,} | {r['seconds']} | {r['nodes']:,} | {r['edges']:,} | "
              f"{'yes' if r['full'] else 'no'} | "
              f"{r['pool_bytes_per_sim']:,.0f} B | {growth} | {after} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rollouts": args.rollouts, "threads": args.threads,
                       "max_memory": max_memory, "params": params, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
