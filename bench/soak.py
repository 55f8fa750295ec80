"""Memory soak: the engine's resident memory during a long streaming analysis.

    python -m bench.soak [--seconds 600] [--size 19] [--max-memory SIZE]
        [--engine "python -m engine.gtp --quiet"] [--interval 50]
        [--sample 5] [--settle 60] [--slack-mb 64]

Starts the engine through :class:`gtp.client.GtpClient`, sets the board
size, plays a few opening moves (the four corner points, 4-4 on boards from
13x13 up, 3-3 below), measures the *baseline* resident set size (VmRSS in
``/proc/<pid>/status``; the engine has warmed its kernels and answered a
command by then), and then runs ``lz-analyze B <interval>`` for
``--seconds``, the way Lizzie or Sabaki keep an engine analysing one
position.  Every ``--sample`` seconds it prints one table row: the
engine's RSS, its difference from the baseline, ``pool_mib`` (the resident
part of the tree's pool arrays, found in ``/proc/<pid>/smaps`` by their size;
``-`` when they cannot be told apart, as with small caps), the visits of the
newest ``info`` line (the sum of the candidates' visits: the root's visits
in this analysis), visits per second since the last row, and the number of
info lines so far.

At the end it stops the analysis the way a GUI does (a blank line: the
engine closes the ``lz-analyze`` answer), checks that the engine still
answers (``name``), sends ``quit`` and prints:

* the largest sampled RSS and the kernel's peak (VmHWM, which includes
  start-up);
* the RSS growth after the first ``--settle`` seconds (default 60; half the
  run when the run is shorter than two of them), i.e. whether memory stays
  flat once the tree is at its cap;
* the visits in the last info line and their rate;
* the pools' resident size, when found (pages become resident as nodes are
  written, 2 MiB at a time under transparent huge pages);
* the bound: baseline + tree cap + slack, where the tree cap is the
  bytes of engine/tree.py's pools of nodes and edges, read from the engine's own ``gomill-describe_engine`` ("tree cap
  N bytes"), so it holds whatever ``--engine`` says; the slack
  (``--slack-mb``) covers the Python and numba heaps' small fluctuations.

Exit status: 0 when every sampled RSS stayed within the bound, 1 when one
did not, 2 when the engine failed (died, hung, answered ``?``).

``--max-memory SIZE`` appends ``--max-memory SIZE`` to the engine command.
With a small cap (e.g. 4M) the pools fill within a second on 19x19 and the
search goes on simulating without growing the tree: visits keep rising
while RSS stays flat.  Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import math
import re
import shlex
import sys
import time
from dataclasses import dataclass

from bench.match import split_command
from engine.board import COLUMNS
from engine.config import parse_bytes
from engine.tree import EDGE_BYTES, N_EFLOAT, N_EINT, N_FLOAT, N_INT, NODE_BYTES, pool_sizes
from gtp.client import GtpClient, GtpClientError

DEFAULT_ENGINE = "python -m engine.gtp --quiet"
MIB = 1024 * 1024


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM, ... of a process in bytes (from /proc/<pid>/status)."""
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            parts = rest.split()
            if key.startswith("Vm") and len(parts) == 2 and parts[1] == "kB":
                values[key] = int(parts[0]) * 1024
    return values


def pool_arrays(cap: int) -> list[int]:
    """The byte sizes of the tree's pool arrays under a cap of ``cap``
    bytes (engine/tree.py: node integers and statistics, edge integers and
    statistics, 4-byte fields)."""
    nodes, edges = pool_sizes(cap)
    return [4 * N_INT * nodes, 4 * N_FLOAT * nodes, 4 * N_EINT * edges, 4 * N_EFLOAT * edges]


def pool_mappings(pid: int, cap: int | None) -> tuple[int, int] | None:
    """Size and resident bytes of the tree's pool arrays, or None if not found.

    The arrays are allocated once with ``np.zeros``: large enough to get an
    anonymous mapping each, whose pages become resident only as nodes and
    edges are written.  They are found in ``/proc/<pid>/smaps`` as the
    anonymous mappings of their sizes (:func:`pool_arrays`), within 64 KiB;
    every one must be found.  Best effort: arrays under 1 MiB share the
    heap, and then nothing is found.
    """
    if not cap:
        return None
    wanted = sorted(pool_arrays(cap))
    if wanted[0] < 1024 * 1024:
        return None
    found = []
    size = None
    anonymous = False
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                head = line.split()
                if head and "-" in head[0] and ":" not in head[0]:
                    lo, hi = (int(x, 16) for x in head[0].split("-"))
                    size, anonymous = hi - lo, len(head) < 6
                elif head and head[0] == "Rss:" and size is not None and anonymous:
                    for want in wanted:
                        if abs(size - want) <= 64 * 1024:
                            found.append((want, int(head[1]) * 1024))
                            wanted.remove(want)
                            break
    except OSError:
        return None
    if wanted:
        return None
    return sum(f[0] for f in found), sum(f[1] for f in found)


def info_visits(line: str) -> int | None:
    """Sum of the candidates' visits in one lz-analyze ``info`` line."""
    if not line.startswith("info "):
        return None
    return sum(int(v) for v in re.findall(r"\bvisits (\d+)", line))


def opening(size: int) -> list[str]:
    """Four corner moves, black first, then black is to move again."""
    line = 4 if size >= 13 else 3 if size >= 7 else 2
    lo, hi = line - 1, size - line
    if lo >= hi:
        return []
    pts = [(hi, hi), (lo, lo), (hi, lo), (lo, hi)]
    return [f"play {'BW'[i % 2]} {COLUMNS[c]}{r + 1}" for i, (c, r) in enumerate(pts)]


def tree_cap(description: str) -> int | None:
    m = re.search(r"tree cap (\d+) bytes", description)
    return int(m.group(1)) if m else None


@dataclass
class Sample:
    t: float
    rss: int
    visits: int
    lines: int
    pool: int | None = None


def mib(n: float) -> str:
    return f"{n / MIB:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=600.0,
                    help="how long to analyse (default %(default)s)")
    ap.add_argument("--size", type=int, default=19, help="board size (default %(default)s)")
    ap.add_argument("--max-memory", default=None, metavar="SIZE",
                    help="pass --max-memory SIZE to the engine (default: the engine's own)")
    ap.add_argument("--engine", default=DEFAULT_ENGINE,
                    help="engine command line (default %(default)r)")
    ap.add_argument("--interval", type=int, default=50,
                    help="lz-analyze interval in centiseconds (default %(default)s)")
    ap.add_argument("--sample", type=float, default=5.0,
                    help="seconds between samples (default %(default)s)")
    ap.add_argument("--settle", type=float, default=60.0,
                    help="growth is measured from this time on (default %(default)s; "
                         "half the run when the run is shorter than twice this)")
    ap.add_argument("--slack-mb", type=float, default=64.0,
                    help="MiB allowed above baseline + tree cap (default %(default)s)")
    ap.add_argument("--timeout", type=float, default=30.0,
                    help="seconds the engine may take to answer a command (default %(default)s)")
    ap.add_argument("--startup-timeout", type=float, default=300.0,
                    help="seconds for the first answer, which waits for start-up "
                         "(default %(default)s)")
    args = ap.parse_args(argv)
    if not (0 < args.seconds < math.inf and 0 < args.sample < math.inf):
        ap.error("--seconds and --sample must be positive")
    if not 2 <= args.size <= 25:
        ap.error("--size must be between 2 and 25")
    if args.interval < 1:
        ap.error("--interval must be at least 1")
    try:
        engine = split_command(args.engine)
    except ValueError as e:
        ap.error(f"bad --engine: {e}")
    if args.max_memory is not None:
        try:
            parse_bytes(args.max_memory)
        except ValueError as e:
            ap.error(f"--max-memory: {e}")
        engine += ["--max-memory", args.max_memory]

    out = sys.stdout
    print(f"engine: {shlex.join(engine)}", file=out)
    return with_engine(engine, args.timeout, out, lambda client: soak(client, args, out))


def with_engine(engine: list[str], timeout: float, out, body) -> int:
    """Start the engine, return ``body(client)``'s exit status, and close
    it; 2 with a message on ``out`` when it cannot start or fails (died,
    hung, answered ``?``)."""
    try:
        client = GtpClient(engine, timeout)
    except OSError as e:
        print(f"error: cannot start the engine: {e}", file=out)
        return 2
    try:
        return body(client)
    except GtpClientError as e:
        print(f"error: engine failed: {e.message}", file=out)
        return 2
    finally:
        client.close()


def soak(client: GtpClient, args, out) -> int:
    started = time.monotonic()
    name = client.send("name", timeout=args.startup_timeout)
    print(f"started {name} (pid {client.pid}) in {time.monotonic() - started:.1f}s", file=out)
    cap = None
    try:
        cap = tree_cap(client.send("gomill-describe_engine"))
    except GtpClientError as e:
        if not e.failed:
            raise
    if cap is None and args.max_memory is not None:
        cap = parse_bytes(args.max_memory)
    client.send(f"boardsize {args.size}")
    client.send("clear_board")
    moves = opening(args.size)
    for cmd in moves:
        client.send(cmd)
    to_move = "B" if len(moves) % 2 == 0 else "W"
    baseline = proc_status(client.pid)["VmRSS"]
    pools = pool_mappings(client.pid, cap)
    tree = sum(pool_arrays(cap)) if cap else 0
    slack = int(args.slack_mb * MIB)
    bound = baseline + tree + slack
    print(f"board {args.size}x{args.size}, opening: "
          f"{' '.join(m.split()[2] for m in moves) or '(none)'}", file=out)
    if not cap:
        cap_text = "unknown cap (0)"
    else:
        nodes, edges = pool_sizes(cap)
        seen = "found mapped" if pools is not None else "not found mapped"
        cap_text = (f"pools of {nodes} nodes x {NODE_BYTES} B and {edges} edges x "
                    f"{EDGE_BYTES} B, {seen}")
    print(f"baseline RSS {mib(baseline)} MiB; bound {mib(bound)} MiB = baseline + tree cap "
          f"{mib(tree)} MiB ({cap_text}) + slack {mib(slack)} MiB", file=out)
    command = f"lz-analyze {to_move} {args.interval}"
    print(f"running {command!r} for {args.seconds:g}s, a sample every {args.sample:g}s", file=out)
    print(f"{'t_s':>7} {'rss_mib':>8} {'d_base':>7} {'pool_mib':>8} {'visits':>10} "
          f"{'visits/s':>9} {'lines':>6}", file=out)
    out.flush()

    samples: list[Sample] = []
    visits = lines = 0

    def take(t: float) -> None:
        nonlocal visits, lines
        for line in client.stream_lines():
            v = info_visits(line)
            if v is not None:
                visits, lines = v, lines + 1
        if client.streaming is None:            # the engine closed the answer itself
            raise GtpClientError(f"{command!r} ended by itself", command)
        rss = proc_status(client.pid)["VmRSS"]
        mapped = pool_mappings(client.pid, cap)
        pool = None if mapped is None else mapped[1]
        prev = samples[-1] if samples else Sample(0.0, rss, 0, 0)
        rate = (visits - prev.visits) / (t - prev.t) if t > prev.t else 0.0
        samples.append(Sample(t, rss, visits, lines, pool))
        pool_text = "-" if pool is None else mib(pool)
        print(f"{t:7.1f} {mib(rss):>8} {(rss - baseline) / MIB:+7.1f} {pool_text:>8} "
              f"{visits:10d} {rate:9.0f} {lines:6d}", file=out)
        out.flush()

    client.stream(command)
    t0 = time.monotonic()
    next_sample = args.sample
    while True:
        now = time.monotonic() - t0
        end = now >= args.seconds
        if now >= next_sample or end:
            take(now)
            next_sample += args.sample
        if end:
            break
        time.sleep(max(0.0, min(next_sample, args.seconds) - (time.monotonic() - t0)))

    t_stop = time.monotonic()
    rest = client.stop_stream()
    stop_s = time.monotonic() - t_stop
    for line in rest:
        v = info_visits(line)
        if v is not None:
            visits, lines = v, lines + 1
    alive = client.send("name")
    status = proc_status(client.pid)
    client.close()
    code = client.returncode

    settle = min(args.settle, args.seconds / 2)
    after = next((s for s in samples if s.t >= settle), samples[-1])
    last = samples[-1]
    peak = max(samples, key=lambda s: s.rss)
    elapsed = last.t
    print(f"analysis stopped with a blank line in {stop_s:.2f}s ({len(rest)} line(s) in flight); "
          f"engine still answers name: {alive!r}; quit, exit status {code}", file=out)
    print(f"max RSS {mib(peak.rss)} MiB at t={peak.t:.0f}s "
          f"(baseline {mib(baseline)} MiB, +{mib(peak.rss - baseline)} MiB); "
          f"peak VmHWM {mib(status.get('VmHWM', 0))} MiB", file=out)
    print(f"RSS growth after {settle:g}s: {(last.rss - after.rss) / MIB:+.1f} MiB "
          f"({mib(after.rss)} MiB at t={after.t:.0f}s -> {mib(last.rss)} MiB at t={last.t:.0f}s)",
          file=out)
    print(f"total visits {visits} in {elapsed:.0f}s ({visits / max(elapsed, 1e-9):.0f}/s), "
          f"{lines} info lines", file=out)
    if last.pool is not None:
        print(f"tree pools resident {mib(last.pool)} MiB of {mib(tree)} MiB (pages become resident "
              f"as nodes and edges are written, 2 MiB at a time under transparent huge pages: an upper "
              f"bound on what was written)", file=out)
    else:
        print("tree pools: not identified in /proc/<pid>/smaps (a small cap shares the heap)",
              file=out)
    within = peak.rss <= bound
    print(f"RSS bound {mib(bound)} MiB: {'within' if within else 'EXCEEDED'}", file=out)
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
