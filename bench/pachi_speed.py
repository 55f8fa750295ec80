"""Speed side by side with a local Pachi build, per CPU-second, one thread.

    python -m bench.pachi_speed --pachi /path/to/pachi [--seconds S] [--rounds R]
                                [--sizes 9,19] [--json FILE]

Three kinds of work, each measured for this engine and for Pachi in the same
run, alternating (this engine, Pachi, this engine, Pachi, ...), ``--rounds``
times, from the empty board with komi 7.5:

* full search: this engine's ``Search`` (tree, RAVE, pattern-policy
  rollouts; no network), against Pachi's UCT engine with its default Moggy
  playouts (``--nojoseki -t S threads=1,pondering=0``; games per second as
  Pachi's log reports them for its search);
* pattern rollouts without a tree: ``policy_playout`` against Pachi's
  ``montecarlo`` engine with ``playout=moggy``;
* light playouts: uniformly random legal moves, no own-eye filling, against
  ``montecarlo`` with ``playout=light``.

For the montecarlo engine the rate is the playouts of one ``genmove``
(a fixed number, ``-t =N``) over the CPU time that ``genmove`` took (from
``/proc/PID/stat``; wall time where there is no /proc).  Build
Pachi from its public source (github.com/pasky/pachi) with ``make DCNN=0``;
pin this command to one core (``taskset -c 0``) and keep the other cores
quiet, since both programs are timed on the core they share.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.playouts import measure as measure_light
from bench.search import measure_rollouts, measure_search, parse_list, warm_up
from engine.config import SearchConfig
from engine.patterns import load_gammas
from gtp.client import GtpClient, GtpClientError

WORK = ("full search", "pattern rollouts, no tree", "light playouts")
UCT_RATE = re.compile(r"mcts [\d.]+s \((\d+) games/s")


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process, from /proc; None without it."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _genmove(pachi: str, args: list[str], size: int, timeout: float) -> tuple[float, str]:
    """CPU seconds (wall where there is no /proc) of one ``genmove b`` on
    the empty board, and Pachi's diagnostics."""
    with tempfile.TemporaryFile("w+") as log:
        with GtpClient([pachi, *args], timeout=timeout, stderr=log) as engine:
            for cmd in (f"boardsize {size}", "clear_board", "komi 7.5"):
                engine.send(cmd)
            cpu0, wall0 = _cpu_seconds(engine.pid), time.perf_counter()
            engine.send("genmove b")
            cpu1, wall1 = _cpu_seconds(engine.pid), time.perf_counter()
        log.seek(0)
        text = log.read()
    spent = cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else wall1 - wall0
    return max(spent, 1e-9), text


def pachi_rate(pachi: str, work: str, size: int, seconds: float) -> float:
    """Pachi's games per CPU-second for one kind of work.  The UCT engine
    reports its own rate; the montecarlo engine (which, built without
    DEBUG, prints nothing) plays a fixed number of games (``-t =N``), N
    sized by shorter runs to last about ``seconds``."""
    timeout = seconds * 4 + 60
    if work == "full search":
        args = ["--nojoseki", "-t", f"{seconds:g}", "threads=1,pondering=0"]
        _, text = _genmove(pachi, args, size, timeout)
        rates = UCT_RATE.findall(text)
        if not rates:
            raise RuntimeError(f"no 'games/s' line in Pachi's log ({' '.join(args)})")
        return float(rates[-1])
    policy = "playout=moggy" if work == "pattern rollouts, no tree" else "playout=light"
    games = 1000
    while True:
        spent, _ = _genmove(pachi, ["-e", "montecarlo", "-t", f"={games}", policy], size, timeout)
        if spent >= min(0.5, seconds / 2):           # long enough for the clock's ticks
            break
        games *= 4
    games = max(games, round(games / spent * seconds))
    spent, _ = _genmove(pachi, ["-e", "montecarlo", "-t", f"={games}", policy], size, timeout)
    return games / spent


def our_rate(work: str, size: int, seconds: float, gammas, cfg: SearchConfig) -> float:
    if work == "full search":
        return measure_search(size, 1, seconds, gammas, cfg)["sims_per_s"]
    if work == "pattern rollouts, no tree":
        return measure_rollouts(size, seconds, gammas, cfg)["playouts_per_s"]
    return measure_light(size, seconds)["playouts_per_s"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.pachi_speed", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pachi", required=True, help="path of a Pachi binary built with DCNN=0")
    ap.add_argument("--seconds", type=float, default=5.0,
                    help="seconds of each measurement (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    ap.add_argument("--sizes", type=parse_list, default=[9, 19],
                    help="comma-separated board sizes (default 9,19)")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    if not 0 < args.seconds < math.inf:
        ap.error("--seconds must be positive")
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if any(not 2 <= n <= 19 for n in args.sizes):
        ap.error("--sizes must be between 2 and 19 (Pachi's largest board)")
    if not (os.path.isfile(args.pachi) and os.access(args.pachi, os.X_OK)):
        ap.error(f"--pachi {args.pachi}: not an executable file")
    cfg = SearchConfig()
    gammas = load_gammas()
    command = "python -m bench.pachi_speed " + " ".join(sys.argv[1:] if argv is None else argv)
    print(f"# {command.strip()}  {time.strftime('%Y-%m-%d %H:%M:%S')}")
    print(f"# one thread each, per CPU-second, {args.seconds:g} s per measurement, "
          f"{args.rounds} alternating rounds, empty board, komi 7.5")
    warm_up(gammas, cfg)
    measure_light(9, 0.1)
    print(f"{'work':<27} {'board':>6} {'this engine':>12} {'Pachi':>9} {'ratio':>6}", flush=True)
    rows = []
    for work in WORK:
        for size in args.sizes:
            ours, theirs = [], []
            try:
                for _ in range(args.rounds):
                    ours.append(our_rate(work, size, args.seconds, gammas, cfg))
                    theirs.append(pachi_rate(args.pachi, work, size, args.seconds))
            except (GtpClientError, RuntimeError, OSError) as e:
                print(f"error: Pachi ({args.pachi}): {e}", file=sys.stderr)
                return 1
            o, t = statistics.mean(ours), statistics.mean(theirs)
            rows.append({"work": work, "size": size, "ours": [round(x, 1) for x in ours],
                         "pachi": [round(x, 1) for x in theirs], "ratio": round(o / t, 2)})
            print(f"{work:<27} {size:>4}x{size:<2} {o:>12,.0f} {t:>9,.0f} {o / t:>6.2f}",
                  flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": command.strip(), "date": time.strftime("%Y-%m-%dT%H:%M:%S"),
                       "seconds": args.seconds, "rounds": args.rounds, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
