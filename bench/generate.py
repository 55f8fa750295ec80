"""Generate training games: this engine against itself and against GNU Go.

    python -m bench.generate OUT_DIR --games N [--size 9] [--komi 7.5]
        [--rollouts 1000] [--network default] [--gnugo /usr/games/gnugo]
        [--gnugo-every 2] [--gnugo-level 10] [--parallel K] [--seed 1]

No public 9x9 game collection is reachable from here, so the 9x9 network
(nets/models.py, issue 19) learns from games made here.  Game ``i``
(1-based) is ``OUT_DIR/gen-<i>.sgf``; every ``--gnugo-every``-th game is
the engine against GNU Go (the engine Black in odd-numbered ones of those,
White in the others), the rest the engine against itself, each side with
its own seed (``--seed`` and the game number), so no two games repeat and
a run is reproducible.  Every game is refereed by bench.match (illegal
moves, hangs, dead stones, area count); a game a program forfeits is not
kept and is played again by the next run.

Resumable: games already in OUT_DIR are skipped, so the same command
continues a stopped run (``--games`` is the total wanted).  The SGF root
comment names both command lines; ``python -m nets.data build OUT_DIR
CACHE --size 9`` turns the folder into a training cache.  With
``--gnugo-every 0`` only self-play is generated (no GNU Go needed).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from sgfmill import sgf as sgfmill

from bench.match import MatchConfig, check_common_args, play_game


def game_path(out: Path, i: int) -> Path:
    return out / f"gen-{i:06d}.sgf"


def wanted(out: Path, games: int) -> list[int]:
    """Game numbers (1-based) not generated yet."""
    return [i for i in range(1, games + 1) if not game_path(out, i).exists()]


def engine_command(args, seed: int) -> list[str]:
    cmd = [sys.executable, "-m", "engine.gtp", "--rollouts", str(args.rollouts),
           "--network", args.network, "--seed", str(seed), "--quiet", "--threads", "1"]
    if args.ownership is not None:
        cmd += ["--ownership", args.ownership]
    return cmd


def sides(args, i: int) -> tuple[list[str], list[str], int, str]:
    """(engine, opponent, bench.match game index, kind) of game i: the
    index's parity gives the engine its colour."""
    engine = engine_command(args, args.seed * 1_000_003 + 2 * i)
    if args.gnugo_every and i % args.gnugo_every == 0:
        opponent = [args.gnugo, "--mode", "gtp", "--level", str(args.gnugo_level),
                    "--chinese-rules", "--positional-superko",
                    "--seed", str(args.seed * 1_000_003 + 2 * i + 1)]
        colour_index = (i // args.gnugo_every) % 2   # alternate colours among GNU Go games
        return engine, opponent, colour_index, "gnugo"
    return engine, engine_command(args, args.seed * 1_000_003 + 2 * i + 1), 0, "self"


def generate_one(args, i: int) -> dict:
    """Play game i in a scratch folder; keep its SGF as gen-<i>.sgf when
    nobody forfeited.  Returns bench.match's record plus ``kind`` and
    ``kept``."""
    engine, opponent, index, kind = sides(args, i)
    scratch = args.out / f".game-{i:06d}"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    cfg = MatchConfig(engine=engine, opponent=opponent, size=args.size, komi=args.komi,
                      max_moves=3 * args.size * args.size, timeout=args.timeout,
                      startup_timeout=args.startup_timeout, sgf_dir=scratch, games=1)
    try:
        rec = play_game(index, cfg)
        rec["kind"] = kind
        rec["kept"] = rec.get("error") is None and rec.get("sgf") is not None
        if rec["kept"]:
            game = sgfmill.Sgf_game.from_bytes(Path(rec["sgf"]).read_bytes())
            root = game.get_root()
            root.set("GN", f"bench.generate game {i} ({kind})")
            first, _, rest = root.get("C").partition("\n")   # bench.match's "Game k of n"
            side = "Black" if index % 2 == 0 else "White"
            root.set("C", f"bench.generate game {i} ({kind}): the engine plays {side}.\n"
                     + rest + "\nEngine: " + shlex.join(engine)
                     + "\nOpponent: " + shlex.join(opponent))
            tmp = scratch / "game.sgf"
            tmp.write_bytes(game.serialise())
            os.replace(tmp, game_path(args.out, i))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.generate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="folder of the games (created; resumed if it has some)")
    ap.add_argument("--games", type=int, required=True, help="games wanted in the folder in all")
    ap.add_argument("--size", type=int, default=9, help="board size (default %(default)s)")
    ap.add_argument("--komi", type=float, default=7.5, help="komi (default %(default)s)")
    ap.add_argument("--rollouts", type=int, default=1000,
                    help="the engine's simulations a move (default %(default)s)")
    ap.add_argument("--network", default="default",
                    help="the engine's --network (default %(default)s)")
    ap.add_argument("--ownership", default=None, help="the engine's --ownership (default: its own)")
    ap.add_argument("--gnugo", default="/usr/games/gnugo", help="GNU Go binary (default %(default)s)")
    ap.add_argument("--gnugo-every", type=int, default=2,
                    help="every K-th game against GNU Go, 0 none (default %(default)s)")
    ap.add_argument("--gnugo-level", type=int, default=10, help="GNU Go level (default %(default)s)")
    ap.add_argument("--parallel", type=int, default=1, help="games at once (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="run seed (default %(default)s)")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds a program may take for one command (default %(default)s)")
    ap.add_argument("--startup-timeout", type=float, default=300.0,
                    help="seconds for a program's first answer (default %(default)s)")
    args = ap.parse_args(argv)
    check_common_args(ap, args)
    if args.rollouts < 1:
        ap.error("--rollouts must be at least 1")
    if args.gnugo_every < 0 or not 1 <= args.gnugo_level <= 10:
        ap.error("--gnugo-every must be >= 0, --gnugo-level 1..10")
    if args.gnugo_every and not (shutil.which(args.gnugo) or Path(args.gnugo).is_file()):
        ap.error(f"--gnugo {args.gnugo}: no such program (or --gnugo-every 0 for self-play only)")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        ap.error(f"cannot create {args.out}: {e}")
    todo = wanted(args.out, args.games)
    print(f"generate: {args.games - len(todo)} of {args.games} games already in {args.out}/, "
          f"{len(todo)} to play", file=sys.stderr, flush=True)
    started = time.perf_counter()
    kept = lost = 0
    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        futures = {pool.submit(generate_one, args, i): i for i in todo}
        for f in as_completed(futures):
            i = futures[f]
            try:
                rec = f.result()
            except Exception as e:      # a bug here must not stop the run
                rec = {"kept": False, "kind": "?", "result": "Void", "moves": 0,
                       "reason": repr(e), "seconds": 0.0}
            kept += rec["kept"]
            lost += not rec["kept"]
            what = "kept" if rec["kept"] else f"NOT kept ({rec.get('reason')})"
            print(f"[game {i}] {rec['kind']}: {rec['result']} in {rec['moves']} moves, "
                  f"{rec['seconds']:.1f} s, {what}", file=sys.stderr, flush=True)
    wall = time.perf_counter() - started
    print(f"generate: {kept} games played and kept, {lost} not kept, in {wall:.0f} s; "
          f"{args.games - len(wanted(args.out, args.games))} of {args.games} in {args.out}/")
    return 0 if lost == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
