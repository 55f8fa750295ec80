"""Composition root: ``python -m engine.gtp [options]`` speaks GTP on
stdin/stdout.  Parses the command line into the frozen config, builds the
player and hands the standard GTP registry to the server.  stdout belongs to
GTP alone; logs go to stderr."""

from __future__ import annotations

import argparse
import logging
import sys

from engine.config import EngineConfig


def parse_args(argv: list[str] | None = None) -> EngineConfig:
    ap = argparse.ArgumentParser(prog="python -m engine.gtp", description=__doc__)
    ap.add_argument("--rollouts", type=int, default=EngineConfig.rollouts,
                    help="playouts per genmove (default %(default)s)")
    ap.add_argument("--size", type=int, default=EngineConfig.board_size,
                    help="board size before any boardsize command (default %(default)s)")
    ap.add_argument("--komi", type=float, default=EngineConfig.komi,
                    help="komi before any komi command (default %(default)s)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (0: from the clock)")
    ap.add_argument("--quiet", action="store_true", help="log only warnings to stderr")
    args = ap.parse_args(argv)
    if args.rollouts < 1:
        ap.error("--rollouts must be at least 1")
    if not 2 <= args.size <= 25:
        ap.error("--size must be between 2 and 25")
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(message)s")
    return EngineConfig(board_size=args.size, komi=args.komi, rollouts=args.rollouts,
                        seed=args.seed)


def main(argv: list[str] | None = None) -> int:
    config = parse_args(argv)
    from gtp import serve, standard_registry
    from engine.player import Player

    player = Player(config)
    serve(standard_registry(player))
    return 0


if __name__ == "__main__":
    sys.exit(main())
