"""Training throughput of policy networks on this machine, features included.

    python -m bench.training CACHE [--models small6,res6,maddison12]
        [--threads 1,2] [--precisions fp32,bf16] [--seconds 20] [--batch 128]
        [--memory-formats contiguous,channels_last]

``CACHE`` is a game cache (``python -m nets.data build``).  For each model,
thread count and precision, a freshly initialised net is trained with Adam
as ``nets.train`` trains it (``nets.train.train_step``, one process, the
batches made in the loop by ``nets.data.PositionSampler``: replay, input
planes and a random symmetry of each position), on the CPU: after 3
untimed steps, steps are timed for ``--seconds`` of wall time.  Positions/s
= batch x steps / time, so the feature computation counts as it does in a
run with no loader workers.

A value net (res6v) trains its value head too, on the cache's game
results.  ``--memory-formats`` times each layout of the activations
(``nets.train --memory-format``; default: the one nets.train's auto picks).

Prints a Markdown table (network, params, threads, layout, positions/s per
precision, ratio of the last precision to the first).  Exit status 2 with
``error: ...`` for a missing cache, an unknown model or bad arguments.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import torch

from bench.inference import (BenchError, parse_counts, parse_precisions, speed_table_head,
                             speed_table_row)
from nets import data as D
from nets.models import MODELS, build_model, count_parameters
from nets.precision import autocast, resolve as resolve_precision
from nets.train import pick_memory_format, policy_value_loss, train_step

CPU = torch.device("cpu")


def steps_per_second(model: str, sampler: D.PositionSampler, batch: int, precision: str,
                     seconds: float, memory_format=torch.contiguous_format) -> float:
    """Positions per second of ``model`` trained in ``precision``."""
    torch.manual_seed(0)
    net = build_model(model).train().to(memory_format=memory_format)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    values = getattr(net, "has_value", False)

    def ctx():
        return autocast(CPU, precision)

    def step(k: int) -> None:
        x, y, c, where = sampler.batch(batch, k, info=True)
        v = torch.from_numpy(sampler.value_targets(where["game"], c)) if values else None
        train_step(net, opt, torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(c),
                   CPU, ctx, (lambda o, y, x, v: policy_value_loss(o, y, v, 1.0)) if values
                   else (lambda logits, y, x: torch.nn.functional.cross_entropy(logits, y)),
                   v=v, memory_format=memory_format)

    for k in range(3):
        step(k)
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        step(3 + n)
        n += 1
    return batch * n / (time.perf_counter() - t0)


def run(args: argparse.Namespace) -> list[dict]:
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in models if m not in MODELS]
    if not models or unknown:
        raise BenchError(f"unknown model name(s) {unknown or models} "
                         f"(known: {', '.join(sorted(MODELS))})")
    threads = parse_counts(args.threads, "--threads")
    precisions = parse_precisions(args.precisions)
    if not 0 < args.seconds < math.inf or args.batch < 1:
        raise BenchError("--seconds and --batch must be positive")
    if not Path(args.cache).is_file():
        raise BenchError(f"cache file {args.cache} does not exist")
    try:
        cache = D.load_cache(args.cache)
    except D.DataError as e:
        raise BenchError(str(e)) from None
    train_games, _ = cache.split()
    sampler = D.PositionSampler(cache, train_games, seed=1)
    auto = resolve_precision("auto", CPU)
    print(f"nets.train steps on {args.cache} ({cache.n_games:,} games), batch {args.batch}, "
          f"Adam, features included, {args.seconds:g} s per cell (auto precision: {auto[0]}, "
          f"{auto[1]}), torch {torch.__version__}", flush=True)
    formats = [f.strip() for f in args.memory_formats.split(",") if f.strip()] \
        if args.memory_formats else ["auto"]
    bad = [f for f in formats if f not in ("auto", "contiguous", "channels_last")]
    if bad:
        raise BenchError(f"--memory-formats: unknown {bad} (contiguous, channels_last, auto)")
    print(speed_table_head(["network", "params", "threads", "layout"], precisions), flush=True)
    rows = []
    for model in models:
        net = build_model(model)
        params = count_parameters(net)
        for t in threads:
            torch.set_num_threads(t)
            for f in formats:
                fmt = pick_memory_format(f, net.config, CPU)
                layout = "channels_last" if fmt == torch.channels_last else "contiguous"
                speeds = []
                for p in precisions:
                    precision = resolve_precision(p, CPU)[0]
                    speed = steps_per_second(model, sampler, args.batch, precision, args.seconds,
                                             fmt)
                    rows.append({"model": model, "threads": t, "precision": precision,
                                 "layout": layout, "positions_per_s": speed})
                    speeds.append(speed)
                print(speed_table_row([model, f"{params:,}", t, layout], speeds), flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.training",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("cache", help="game cache (.npz) from python -m nets.data build")
    ap.add_argument("--models", default="small6,res6,maddison12",
                    help="comma-separated registry names")
    ap.add_argument("--threads", default="1,2", help="comma-separated torch thread counts")
    ap.add_argument("--precisions", default="fp32,bf16",
                    help="comma-separated precisions (fp32, bf16, auto)")
    ap.add_argument("--seconds", type=float, default=20.0, help="timed seconds per cell")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--memory-formats", default=None,
                    help="comma-separated activation layouts to time (contiguous, "
                         "channels_last; default: the one nets.train picks)")
    args = ap.parse_args(argv)
    try:
        run(args)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
