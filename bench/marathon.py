"""A bot's long life: many games in one engine process, as kgsGtp runs a bot.

    python -m bench.marathon [--games 200] [--size 9] [--komi 7.5]
        [--engine "python -m engine.gtp --quiet --rollouts 300"]
        [--max-moves M] [--every 10] [--timeout 120] [--json FILE]

One engine process plays ``--games`` games against itself (``genmove b``,
``genmove w``, ... until two passes, a resignation or ``--max-moves``
moves), with ``clear_board`` and ``komi`` between games as a server's
client sends them.  After every game it reads the process's resident
memory (VmRSS) and keeps the game's moves and its seconds per move.  Every
``--every`` games it prints a row: games, RSS, seconds per move over those
games, moves, results.

At the end:

* **memory**: RSS after game 20 (or the first tenth of the run, if
  shorter) against the last game's, and the largest in between: flat when
  within 10% of the game-20 value;
* **time per move**: the mean over the first and over the last tenth of
  the games (after game 20 as above);
* **replay**: the last game's moves are played with ``play`` into a fresh
  engine process; its ``showboard`` must equal the long-lived process's
  at the end of that game (a state that leaked from an earlier game would
  show).

Exit status 0 when memory stayed flat and the boards are equal, 1 when not,
2 when the engine failed (died, hung, answered ``?``).  Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time

from bench.match import split_command
from bench.soak import MIB, proc_status, with_engine
from gtp.client import GtpClient

DEFAULT_ENGINE = "python -m engine.gtp --quiet --rollouts 300"
SETTLE_GAMES = 20


def play_game(client: GtpClient, size: int, komi: float, max_moves: int) -> dict:
    """One self-play game from an empty board: moves, seconds, result."""
    client.send("clear_board")
    client.send(f"komi {komi:g}")
    moves: list[str] = []
    seconds = 0.0
    passes = 0
    result = None
    while len(moves) < max_moves:
        colour = "bw"[len(moves) % 2]
        t = time.perf_counter()
        answer = client.send(f"genmove {colour}").strip().lower()
        seconds += time.perf_counter() - t
        if answer == "resign":
            result = f"{'WB'[len(moves) % 2]}+R"
            break
        moves.append(f"{colour} {answer}")
        passes = passes + 1 if answer == "pass" else 0
        if passes >= 2:
            break
    if result is None:
        result = client.send("final_score").strip()
    return {"moves": moves, "seconds": seconds, "result": result,
            "board": client.send("showboard")}


def replay(engine: list[str], size: int, komi: float, moves: list[str], timeout: float) -> str:
    """showboard of a fresh engine process after ``moves`` (played with play)."""
    client = GtpClient(engine, timeout)
    try:
        client.send("name", timeout=max(timeout, 300.0))
        client.send(f"boardsize {size}")
        client.send("clear_board")
        client.send(f"komi {komi:g}")
        for m in moves:
            client.send(f"play {m}")
        return client.send("showboard")
    finally:
        client.close()


def mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else 0.0


def run(client: GtpClient, engine: list[str], args, out) -> int:
    started = time.monotonic()
    name = client.send("name", timeout=max(args.timeout, 300.0))
    print(f"started {name} (pid {client.pid}) in {time.monotonic() - started:.1f}s", file=out)
    client.send(f"boardsize {args.size}")
    print(f"{'games':>6} {'rss_mib':>8} {'s/move':>7} {'moves':>6}  results", file=out)
    games: list[dict] = []
    window: list[dict] = []
    for g in range(args.games):
        game = play_game(client, args.size, args.komi, args.max_moves)
        game["rss"] = proc_status(client.pid)["VmRSS"]
        games.append(game)
        window.append(game)
        if len(window) == args.every or g == args.games - 1:
            n_moves = sum(len(x["moves"]) for x in window)
            spm = sum(x["seconds"] for x in window) / max(n_moves, 1)
            results = " ".join(x["result"] for x in window)
            print(f"{g + 1:6d} {game['rss'] / MIB:8.1f} {spm:7.3f} {n_moves / len(window):6.1f}"
                  f"  {results}", file=out)
            out.flush()
            window = []
    client.send("quit")

    settle = min(SETTLE_GAMES, max(1, args.games // 10))
    base = games[settle - 1]["rss"]
    later = games[settle - 1:]
    peak = max(x["rss"] for x in later)
    last = games[-1]["rss"]
    flat = peak <= 1.1 * base and last >= 0.9 * base
    tenth = max(1, len(later) // 10)

    def per_move(xs):
        return sum(x["seconds"] for x in xs) / max(1, sum(len(x["moves"]) for x in xs))

    first_t, last_t = per_move(later[:tenth]), per_move(later[-tenth:])
    fresh = replay(engine, args.size, args.komi, games[-1]["moves"], args.timeout)
    same = fresh == games[-1]["board"]
    print(f"memory: RSS {base / MIB:.1f} MiB after game {settle}, {last / MIB:.1f} MiB after "
          f"game {len(games)} ({(last - base) / base:+.1%}), at most {peak / MIB:.1f} MiB "
          f"({(peak - base) / base:+.1%}): {'flat (within 10%)' if flat else 'NOT flat'}",
          file=out)
    print(f"time per move: {first_t:.3f} s over games {settle}-{settle + tenth - 1}, "
          f"{last_t:.3f} s over the last {tenth} games ({(last_t - first_t) / first_t:+.1%})"
          if first_t > 0 else "time per move: no moves", file=out)
    print(f"replay: the last game ({len(games[-1]['moves'])} moves, {games[-1]['result']}) "
          f"played into a fresh process gives {'the same board' if same else 'ANOTHER board'}",
          file=out)
    if not same:
        print(f"long-lived process:\n{games[-1]['board']}\nfresh process:\n{fresh}", file=out)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"engine": engine, "size": args.size, "komi": args.komi,
                       "games": [{k: v for k, v in x.items() if k != "board"} for x in games],
                       "rss_settled": base, "rss_last": last, "rss_peak": peak, "flat": flat,
                       "seconds_per_move_first": first_t, "seconds_per_move_last": last_t,
                       "replay_same": same}, f, indent=1)
    return 0 if flat and same else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.marathon", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=200, help="games (default %(default)s)")
    ap.add_argument("--size", type=int, default=9, help="board size (default %(default)s)")
    ap.add_argument("--komi", type=float, default=7.5, help="komi (default %(default)s)")
    ap.add_argument("--engine", default=DEFAULT_ENGINE,
                    help="engine command line (default %(default)r)")
    ap.add_argument("--max-moves", type=int, default=None,
                    help="moves after which a game is counted as it stands (default 3 * size^2)")
    ap.add_argument("--every", type=int, default=10, help="games per printed row")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds the engine may take to answer a command (default %(default)s)")
    ap.add_argument("--json", default=None, help="also write every game's record here")
    args = ap.parse_args(argv)
    if args.games < 1 or args.every < 1:
        ap.error("--games and --every must be at least 1")
    if not 2 <= args.size <= 25:
        ap.error("--size must be between 2 and 25")
    if not (0 < args.timeout < math.inf):
        ap.error("--timeout must be positive")
    args.max_moves = args.max_moves or 3 * args.size * args.size
    try:
        engine = split_command(args.engine)
    except ValueError as e:
        ap.error(f"bad --engine: {e}")
    out = sys.stdout
    print(f"engine: {shlex.join(engine)}; {args.games} games on {args.size}x{args.size}, "
          f"komi {args.komi:g}, one process", file=out)
    return with_engine(engine, args.timeout, out, lambda client: run(client, engine, args, out))


if __name__ == "__main__":
    sys.exit(main())
