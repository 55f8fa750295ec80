"""Delayed priors: what the network worker costs the search and what it delivers.

    python -m bench.async [--seconds S] [--sizes 9,19] [--threads N]
                          [--network PATH] [--device auto|cpu|cuda] [--batch 128]
                          [--net-threads 1] [--eager] [--max-wait MS] [--json FILE]

For each board size, the search runs from the empty board for ``--seconds``
twice: without a network, then with the network's delayed priors (the
worker of nets/worker.py on the GPU if there is one, else on the CPU with
``--net-threads`` threads).  One row per size:

* rollouts/s without the network and with it, and their ratio;
* network evaluations per second, the fraction of the expanded nodes that
  got the network's priors, and of a value network's, the fraction that got
  a value too (delayed values), requests dropped (stale or past the queue's
  bound) and deferred (the thread's ring was full);
* median and 95th-percentile lag from a request's publication to its
  priors in the tree, the worker's mean batch, and the visit threshold the
  back-pressure ended on.

``--max-wait MS`` sets how long the worker waits for a batch to fill
before it goes with fewer (default: nets/worker.py's policy, 2 ms on a GPU,
none on a CPU), so that both sides of that trade, lag and batch size, can
be measured on one machine.

Kernels and the network are warmed up first.  The search's early stop is
off so that every run lasts the full time.  The numbers depend on whatever
else runs on the machine; the header says which machine produced them.
"""

from __future__ import annotations

import argparse
import math
import json
import os
import platform
import sys

from engine.board import Board
from engine.config import SearchConfig
from engine.patterns import load_gammas
from engine.search import C_EXPANDED, Search


class _TimedSearch(Search):
    """A Search that never stops early: runs until its time is up."""

    def _decided(self, *args) -> bool:
        return False


def measure(size: int, seconds: float, threads: int, evaluator, batch: int,
            gammas, seed: int = 1, max_wait: float | None = None) -> dict:
    from nets.worker import PriorWorker

    cfg = SearchConfig()
    null = _TimedSearch(cfg, gammas, threads=threads, seed=seed)
    r0 = null.run(Board(size), 7.5, seconds=seconds)
    search = _TimedSearch(cfg, gammas, threads=threads, seed=seed)
    search.attach_network(evaluator.evaluate, evaluator.supports,
                          value=evaluator.evaluate_value if evaluator.has_value else None)
    worker = PriorWorker(search.queue, evaluator, batch, max_wait)
    worker.start()
    try:
        r1 = search.run(Board(size), 7.5, seconds=seconds)
    finally:
        worker.stop()
    expanded = int(sum(sc.counters[C_EXPANDED] for sc in search.scratch))
    n = r1.net
    return {
        "size": size, "threads": threads, "seconds": round(r1.seconds, 2),
        "rollouts_per_s_null": round(r0.sims_per_s, 1),
        "rollouts_per_s_net": round(r1.sims_per_s, 1),
        "ratio": round(r1.sims_per_s / r0.sims_per_s, 3) if r0.sims_per_s else 0.0,
        "evals_per_s": round(n.evaluated / r1.seconds, 1),
        "expanded": expanded, "evaluated": n.evaluated,
        "fraction_evaluated": round(n.evaluated / expanded, 3) if expanded else 0.0,
        "valued": n.valued,
        "fraction_valued": round(n.valued / expanded, 3) if expanded else 0.0,
        "dropped": n.dropped, "deferred": n.deferred,
        "lag_median_ms": round(n.lag_median_ms, 1), "lag_p95_ms": round(n.lag_p95_ms, 1),
        "visit_threshold_end": n.nn_visits, "mean_batch": round(n.mean_batch, 1),
    }


def format_table(rows: list[dict]) -> str:
    head = ("| board | rollouts/s, no network | rollouts/s, delayed priors | ratio "
            "| evaluations/s | expanded nodes evaluated | expanded nodes valued | dropped "
            "| deferred | lag median / p95 (ms) | mean batch | visit threshold at end |")
    out = [head, "|" + "---|" * 12]
    for r in rows:
        out.append(f"| {r['size']}x{r['size']} | {r['rollouts_per_s_null']:,.0f} "
                   f"| {r['rollouts_per_s_net']:,.0f} | {r['ratio']:.2f} "
                   f"| {r['evals_per_s']:,.0f} "
                   f"| {r['fraction_evaluated']:.1%} ({r['evaluated']:,} of {r['expanded']:,}) "
                   f"| {r['fraction_valued']:.1%} "
                   f"| {r['dropped']:,} | {r['deferred']:,} "
                   f"| {r['lag_median_ms']:.0f} / {r['lag_p95_ms']:.0f} "
                   f"| {r['mean_batch']:.1f} | {r['visit_threshold_end']:g} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.async", description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="search time per run")
    ap.add_argument("--sizes", default="9,19", help="board sizes (default %(default)s)")
    ap.add_argument("--threads", type=int, default=1, help="search threads (default 1)")
    ap.add_argument("--network", default=None, help="checkpoint (default: the shipped one)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--net-threads", type=int, default=1,
                    help="CPU threads of the network on a CPU (default 1)")
    ap.add_argument("--eager", action="store_true",
                    help="on CUDA, run the network eagerly, not as CUDA graphs (to compare)")
    ap.add_argument("--max-wait", type=float, default=None, metavar="MS",
                    help="milliseconds the worker waits for a batch to fill (default: 2 on a "
                         "GPU, 0 on a CPU)")
    ap.add_argument("--json", default=None, help="also write the rows to FILE")
    args = ap.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        ap.error(f"--sizes: expected numbers like 9,19, got {args.sizes!r}")
    if not 0 < args.seconds < math.inf or args.threads < 1 or args.batch < 1 or args.net_threads < 1:
        ap.error("--seconds, --threads, --batch and --net-threads must be positive")
    if args.max_wait is not None and not 0 <= args.max_wait < math.inf:
        ap.error(f"--max-wait must be a number of milliseconds >= 0, got {args.max_wait:g}")
    from nets.evaluator import DEFAULT_WEIGHTS, PolicyEvaluator
    from nets.worker import default_max_wait

    try:
        evaluator = PolicyEvaluator(args.network or DEFAULT_WEIGHTS, args.device, args.net_threads,
                                    cuda_graphs=not args.eager)
    except ValueError as e:
        print(f"bench.async: {e}", file=sys.stderr)
        return 2
    bad = [s for s in sizes if not evaluator.supports(s)]
    if bad:
        ap.error(f"--sizes: the network takes {evaluator.min_size}..{evaluator.max_size}, not {bad}")
    gammas = load_gammas()
    # warm-up: kernels (numba cache) and the network's first calls
    measure(9, 0.3, 1, evaluator, args.batch, gammas)
    for s in sizes:
        evaluator.warm(s, args.batch)
    graphs = ("" if evaluator.device.type != "cuda"
              else ", CUDA graphs" if evaluator.cuda_graphs else ", eager")
    wait = (default_max_wait(evaluator.device) if args.max_wait is None
            else args.max_wait / 1000.0)
    print(f"# {platform.node()}: {os.cpu_count()} cores, network {evaluator.name} on "
          f"{evaluator.device}{graphs}, batch {args.batch} (filled for up to "
          f"{1000.0 * wait:g} ms), search threads {args.threads}, "
          f"{args.seconds:g}s per run", flush=True)
    rows = [measure(s, args.seconds, args.threads, evaluator, args.batch, gammas,
                    max_wait=wait) for s in sizes]
    print(format_table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
