"""Composition root: ``python -m engine.gtp [options]`` speaks GTP on
stdin/stdout.  Parses the command line into the frozen configs, loads the
policy network (nets/, imported lazily here and nowhere else in engine/)
and starts its prior worker, builds the player and its analysis front
(engine/analysis.py), warms up the numba kernels (so no GTP command pays
for compiling), and serves the standard GTP registry plus the engine's
extensions.  stdout belongs to GTP alone; logs and GoGui's live graphics go
to stderr.  The console command ``delayed-go`` (pyproject.toml) is cli()."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
import threading
import time

from engine.config import (MAX_GFX_INTERVAL, MAX_THREADS, MIN_MEMORY, RULES, EngineConfig,
                           SearchConfig, check_range, parse_bytes, search_params)


@dataclasses.dataclass(frozen=True)
class FrontOptions:
    """Options of the GTP front end and the network, outside the engine's config."""
    ponder: bool = False
    gfx_interval: float = 0.0
    network: str | None = None      # checkpoint path; None: no network
    device: str = "auto"
    batch: int = 128
    net_threads: int = 1
    precision: str = "auto"         # the network's arithmetic: auto, fp32, bf16
    ownership: str | None = None    # ownership network checkpoint; None: playouts alone


def _rank(text: str) -> int:
    t = text.strip().lower()
    if len(t) == 2 and t[0] in "123456789" and t[1] == "d":
        return int(t[0])
    raise argparse.ArgumentTypeError(f"rank must be 1d..9d, got {text!r}")


def parse_args(argv: list[str] | None = None) -> EngineConfig:
    return parse_options(argv)[0]


def parse_options(argv: list[str] | None = None,
                  prog: str = "python -m engine.gtp") -> tuple[EngineConfig, FrontOptions]:
    d = EngineConfig()
    ap = argparse.ArgumentParser(prog=prog,
                                 description="A GTP Go engine (UCT + RAVE search).")
    ap.add_argument("--rollouts", type=int, default=d.rollouts,
                    help="simulations per move (default %(default)s)")
    ap.add_argument("--time", type=float, default=None, dest="move_time",
                    help="seconds per move at most (default: rollouts and the GTP clock decide)")
    ap.add_argument("--threads", type=int, default=d.threads,
                    help="search threads (default %(default)s)")
    ap.add_argument("--resign", type=float, default=d.resign,
                    help="resign below this winrate, 0 never (default %(default)s)")
    ap.add_argument("--resign-margin", type=float, default=d.resign_margin, metavar="POINTS",
                    help="... and only when the search expects to lose by more than this many "
                         "points (default %(default)s; 0: the winrate alone)")
    ap.add_argument("--rules", default=d.rules, choices=tuple(RULES),
                    help="scoring rules, for the handicap compensation White gets: chinese and "
                         "japanese a point per stone, aga one less, new_zealand and "
                         "tromp-taylor none; kgs-rules changes them (default %(default)s)")
    ap.add_argument("--max-memory", default="2G", metavar="SIZE",
                    help="the search tree's memory cap, e.g. 512M, 2G, 8G (default %(default)s: "
                         "about four million simulations of a 19x19 move); when the tree is full "
                         "the search goes on without growing it")
    ap.add_argument("--lag", type=float, default=d.lag,
                    help="seconds kept back from each clock for lag (default %(default)s)")
    ap.add_argument("--size", type=int, default=d.board_size,
                    help="board size before any boardsize command (default %(default)s)")
    ap.add_argument("--komi", type=float, default=d.komi,
                    help="komi before any komi command (default %(default)s)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="set a search constant of engine/config.py's SearchConfig, e.g. "
                         "--param c_explore=0.3 (repeatable; for tuning)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (0: from the clock)")
    ap.add_argument("--quiet", action="store_true", help="log only warnings to stderr")
    ap.add_argument("--ponder", action="store_true",
                    help="after genmove, search on until the next command")
    ap.add_argument("--gfx-interval", type=float, default=0.0, metavar="SECONDS",
                    help="GoGui live graphics on stderr during genmove (default: off)")
    ap.add_argument("--network", default="default", metavar="PATH",
                    help="network checkpoint (priors, and values where it has a value head); "
                         "'default' the shipped one (res6v), 'none' no network")
    ap.add_argument("--ownership", default="default", metavar="PATH",
                    help="ownership network checkpoint blended with the playouts for scoring, "
                         "dead stones and the pass decision (nets/ownership.py); 'default' the "
                         "shipped one, 'none' playouts alone")
    ap.add_argument("--policy-only", action="store_true",
                    help="play the network's best move with no search (the paper's CNN alone)")
    ap.add_argument("--policy-sample", type=int, default=d.policy_sample, metavar="N",
                    help="with --policy-only, draw the first N moves of a game from the "
                         "network's probabilities instead of playing its best (default "
                         "%(default)s: always the best)")
    ap.add_argument("--policy-symmetries", type=int, choices=(1, 8), default=None,
                    help="with --policy-only, the network's probabilities averaged over the "
                         "board's 8 symmetries (8, the default: 1.2 points more top-1 on "
                         "test19 for res6v) or taken from the position as it is (1)")
    ap.add_argument("--rank", type=_rank, default="9d",
                    help="rank planes fed to the network, 1d..9d (default 9d)")
    ap.add_argument("--device", default="auto",
                    help="network device: auto (GPU if there is one), cpu, cuda, cuda:N")
    ap.add_argument("--batch", type=int, default=128,
                    help="network batch size of the prior worker (default %(default)s)")
    ap.add_argument("--net-threads", type=int, default=1,
                    help="CPU threads of the network when it runs on the CPU (default %(default)s)")
    ap.add_argument("--precision", choices=("auto", "fp32", "bf16"), default="auto",
                    help="network arithmetic: bf16 where the GPU or CPU is fast at it (auto), "
                         "or forced")
    args = ap.parse_args(argv)
    try:
        max_memory = parse_bytes(args.max_memory)
    except ValueError as e:
        ap.error(f"--max-memory: {e}")
    if max_memory < MIN_MEMORY:
        ap.error(f"--max-memory {args.max_memory} is too small: at least {MIN_MEMORY >> 20}M")
    try:
        check_range("--gfx-interval", args.gfx_interval, 0.0, MAX_GFX_INTERVAL)
        check_range("--batch", args.batch, 1, 65536)
        check_range("--net-threads", args.net_threads, 1, MAX_THREADS)
    except ValueError as e:
        ap.error(str(e))
    network = None if args.network.lower() == "none" else args.network
    ownership = None if args.ownership.lower() == "none" else args.ownership
    if args.policy_only and network is None:
        ap.error("--policy-only needs a network")
    if args.policy_sample and not args.policy_only:
        ap.error("--policy-sample applies to --policy-only play")
    if args.policy_symmetries is not None and not args.policy_only:
        ap.error("--policy-symmetries applies to --policy-only play")
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(message)s")
    try:
        overrides = search_params(args.param)
    except ValueError as e:
        ap.error(str(e))
    try:    # the configs check their own ranges (engine/config.py)
        search = dataclasses.replace(SearchConfig(), max_memory=max_memory,
                                     nn_rank=args.rank, **overrides)
        config = EngineConfig(board_size=args.size, komi=args.komi, rollouts=args.rollouts,
                              move_time=args.move_time, threads=args.threads,
                              resign=args.resign, resign_margin=args.resign_margin,
                              lag=args.lag, seed=args.seed, rules=args.rules,
                              policy_only=args.policy_only,
                              policy_sample=args.policy_sample,
                              policy_symmetries=args.policy_symmetries or d.policy_symmetries,
                              search=search)
    except ValueError as e:
        ap.error(str(e))
    return config, FrontOptions(ponder=args.ponder, gfx_interval=args.gfx_interval,
                                network=network, device=args.device, batch=args.batch,
                                net_threads=args.net_threads, precision=args.precision,
                                ownership=ownership)


def load_network(options: FrontOptions):
    """(evaluator, start_worker) for the Player, or (None, None)."""
    if options.network is None:
        return None, None
    from nets.evaluator import DEFAULT_WEIGHTS, PolicyEvaluator
    from nets.worker import PriorWorker

    path = DEFAULT_WEIGHTS if options.network == "default" else options.network
    evaluator = PolicyEvaluator(path, options.device, options.net_threads, options.precision)
    logging.getLogger("engine").info(
        "network %s (%s) on %s, %s (%s); %s", evaluator.name, path, evaluator.device,
        evaluator.precision, evaluator.precision_reason,
        "value head: delayed values join the rollouts" if evaluator.has_value
        else "no value head: priors only, positions judged by the rollouts alone")

    def start_worker(queue):
        worker = PriorWorker(queue, evaluator, options.batch)
        worker.start()
        return worker

    return evaluator, start_worker


def load_ownership(options: FrontOptions):
    """The ownership network for the Player, or None (asked for none, or
    'default' while no default is shipped)."""
    if options.ownership is None:
        return None
    from nets.evaluator import DEFAULT_OWNERSHIP, OwnershipEvaluator

    path = DEFAULT_OWNERSHIP if options.ownership == "default" else options.ownership
    if options.ownership == "default" and not DEFAULT_OWNERSHIP.exists():
        return None
    evaluator = OwnershipEvaluator(path, options.device, options.net_threads, options.precision)
    logging.getLogger("engine").info("ownership network %s (%s) on %s, %s", evaluator.name, path,
                                     evaluator.device, evaluator.precision)
    return evaluator


def build_registry(player, options: FrontOptions | None = None):
    """The standard commands plus the engine's extensions."""
    from gtp import Color, Str, standard_registry
    from gtp.commands import (add_analysis_commands, add_gogui_commands, add_gomill_commands,
                              add_kgs_commands, live_gfx)
    from gtp.vertex import format_vertex
    from engine.analysis import Analysis

    options = options or FrontOptions()
    size = player.board_size

    def live(report) -> None:
        sys.stderr.write(live_gfx(report, size()))
        sys.stderr.flush()

    analysis = Analysis(player, ponder=options.ponder, live=live,
                        live_interval=options.gfx_interval)
    reg = standard_registry(player)

    def move_text(move) -> str:
        return move if isinstance(move, str) else format_vertex(move, size())

    reg.add("genmove", lambda color: move_text(analysis.genmove(color)), args=(Color,),
            replace=True)
    reg.add("kgs-genmove_cleanup", lambda color: move_text(analysis.genmove(color, cleanup=True)),
            args=(Color,))
    reg.add("reg_genmove", lambda color: move_text(player.genmove(color, play=False)),
            args=(Color,))
    reg.add("final_status_list", lambda status: " ".join(
        format_vertex(v, size()) for v in player.final_status_list(status)), args=(Str,))
    add_analysis_commands(reg, analysis)
    add_gogui_commands(reg, analysis, prefix="dg-")
    add_kgs_commands(reg, player, game_over=analysis.game_over, rules=analysis.set_rules)
    add_gomill_commands(reg, analysis.describe, analysis.explain_last_move)
    reg.set_interrupt(analysis.interrupt)
    reg.set_idle(analysis.idle)
    return reg


def main(argv: list[str] | None = None, prog: str = "python -m engine.gtp") -> int:
    config, options = parse_options(argv, prog)
    from gtp import serve
    from engine.player import Player

    try:
        network, start_worker = load_network(options)
    except ValueError as e:
        sys.stderr.write(f"{prog}: error: --network: {e}\n")
        return 2
    try:
        ownership = load_ownership(options)
    except ValueError as e:
        sys.stderr.write(f"{prog}: error: --ownership: {e}\n")
        return 2
    try:
        player = Player(config, network, start_worker, ownership)
    except ValueError as e:
        sys.stderr.write(f"{prog}: error: --network: {e}\n")
        return 2
    try:
        player.warm_up()
        serve(build_registry(player, options), end_of_input_stops=True,
              on_ending=exit_watchdog, grace=ENDING_GRACE)
    finally:
        player.close()
    return 0


EXIT_SECONDS = 1.8
"""Once the session ends (quit, or end of input), the process is gone within
this many seconds, whatever a search thread is doing."""

ENDING_GRACE = 1.0
"""A genmove cut short by the session's end (``quit`` right after it, or end
of input) still searches until this many seconds after it started: a piped
``genmove b`` then ``quit`` gets a real move, and the process still ends
well within EXIT_SECONDS of the end."""


def exit_watchdog() -> None:
    """Start a timer that ends the process if it is still running
    EXIT_SECONDS from now (a normal exit comes long before: main returns and
    the process ends at once).  Called by the GTP server when the session
    starts to end."""
    def fire() -> None:
        time.sleep(EXIT_SECONDS)
        busy = sorted({t.name for t in threading.enumerate()
                       if t is not threading.current_thread() and t.is_alive()})
        # os.write, not sys.stderr: a stuck thread may hold the stream's lock
        message = (f"python -m engine.gtp: still running {EXIT_SECONDS:g} s after the session "
                   f"ended (threads: {', '.join(busy)}): abandoning them\n")
        try:
            os.write(2, message.encode("utf-8", "replace"))
        finally:
            os._exit(1)

    threading.Thread(target=fire, name="exit-watchdog", daemon=True).start()


def cli(prog: str = "delayed-go") -> None:
    """The console command: main, then the process ends at once.  Interpreter
    teardown with torch and numba loaded takes seconds; GTP controllers
    (gogui-twogtp, ringmaster) expect quit to end the process at once.
    Everything is answered by now; flushed here."""
    code = main(prog=prog)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    cli("python -m engine.gtp")
