"""Composition root: ``python -m engine.gtp [options]`` speaks GTP on
stdin/stdout.  Parses the command line into the frozen configs, builds the
player, warms up the numba kernels (so no GTP command pays for compiling),
and serves the standard GTP registry plus the engine's extensions.  stdout
belongs to GTP alone; logs go to stderr."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys

from engine.config import EngineConfig, SearchConfig


def parse_args(argv: list[str] | None = None) -> EngineConfig:
    d = EngineConfig()
    ap = argparse.ArgumentParser(prog="python -m engine.gtp",
                                 description="A GTP Go engine (UCT + RAVE search).")
    ap.add_argument("--rollouts", type=int, default=d.rollouts,
                    help="simulations per move (default %(default)s)")
    ap.add_argument("--time", type=float, default=None, dest="move_time",
                    help="seconds per move at most (default: rollouts and the GTP clock decide)")
    ap.add_argument("--threads", type=int, default=d.threads,
                    help="search threads (default %(default)s)")
    ap.add_argument("--resign", type=float, default=d.resign,
                    help="resign below this winrate, 0 never (default %(default)s)")
    ap.add_argument("--max-nodes", type=int, default=d.search.max_nodes,
                    help="tree size cap in nodes (default %(default)s)")
    ap.add_argument("--lag", type=float, default=d.lag,
                    help="seconds kept back from each clock for lag (default %(default)s)")
    ap.add_argument("--size", type=int, default=d.board_size,
                    help="board size before any boardsize command (default %(default)s)")
    ap.add_argument("--komi", type=float, default=d.komi,
                    help="komi before any komi command (default %(default)s)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (0: from the clock)")
    ap.add_argument("--quiet", action="store_true", help="log only warnings to stderr")
    args = ap.parse_args(argv)
    if args.rollouts < 1:
        ap.error("--rollouts must be at least 1")
    if args.threads < 1:
        ap.error("--threads must be at least 1")
    if not 0 <= args.resign < 1:
        ap.error("--resign must be in [0, 1)")
    if args.max_nodes < 10_000:
        ap.error("--max-nodes must be at least 10000")
    if args.move_time is not None and args.move_time <= 0:
        ap.error("--time must be positive")
    if not 2 <= args.size <= 25:
        ap.error("--size must be between 2 and 25")
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(message)s")
    search = dataclasses.replace(SearchConfig(), max_nodes=args.max_nodes)
    return EngineConfig(board_size=args.size, komi=args.komi, rollouts=args.rollouts,
                        move_time=args.move_time, threads=args.threads, resign=args.resign,
                        lag=args.lag, seed=args.seed, search=search)


def build_registry(player):
    """The standard commands plus the engine's extensions."""
    from gtp import Color, Str, standard_registry
    from gtp.vertex import format_vertex

    reg = standard_registry(player)

    def vertices(vs) -> str:
        return " ".join(format_vertex(v, player.board_size()) for v in vs)

    def genmove_cleanup(color: str) -> str:
        move = player.genmove(color, cleanup=True)
        return move if isinstance(move, str) else format_vertex(move, player.board_size())

    reg.add("final_status_list", lambda status: vertices(player.final_status_list(status)),
            args=(Str,))
    reg.add("kgs-genmove_cleanup", genmove_cleanup, args=(Color,))
    return reg


def main(argv: list[str] | None = None) -> int:
    config = parse_args(argv)
    from gtp import serve
    from engine.player import Player

    player = Player(config)
    player.warm_up()
    serve(build_registry(player))
    return 0


if __name__ == "__main__":
    sys.exit(main())
