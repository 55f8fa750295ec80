"""Training throughput of policy networks on this machine, features included.

    python -m bench.training CACHE [--models small6,res6,maddison12]
        [--threads 1,2] [--precisions fp32,bf16] [--seconds 20] [--batch 128]
        [--memory-formats contiguous,channels_last] [--profile] [--device cpu|cuda|auto]
        [--labels LABELS.jsonl[,MORE.jsonl]]

``CACHE`` is a game cache (``python -m nets.data build``).  For each model,
thread count and precision, a freshly initialised net is trained with Adam
as ``nets.train`` trains it (``nets.train.train_step``, one process, the
batches made in the loop by ``nets.data.PositionSampler``: replay, input
planes and a random symmetry of each position), on the CPU (``--device
cuda``: on the GPU, the batches still made on the CPU, one step after the
other, and cuDNN left to pick its kernels as nets.train does): after 3
untimed steps, steps are timed for ``--seconds`` of wall time.  Positions/s
= batch x steps / time, so the feature computation counts as it does in a
run with no loader workers.

A value net (res6v) trains its value head too, on the cache's game
results, and with ``--labels`` (final-ownership labels of the cache's
games, as ``nets.train --labels`` takes them) its ownership head on the
labelled games' positions: the step the long runs take.
``--memory-formats`` times each layout of the activations
(``nets.train --memory-format``; default: the one nets.train's auto picks).
Steps clip the gradient's norm at 5, as the long runs do.  ``--profile``
adds a table of where a step's time goes (the batch, the forward pass with
the loss, the backward pass, the clipping, Adam's step; the clock read
between them, which on the CPU waits for nothing) and the TFLOP/s that the
two passes achieve, from PyTorch's count of their operations, and the
positions/s of a step without its batch, which is what a run whose loader
workers make the batches can reach at most.

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
from torch.utils.flop_counter import FlopCounterMode

from bench.inference import (BenchError, parse_counts, parse_precisions, speed_table_head,
                             speed_table_row)
from nets import data as D
from nets import ownership as O
from nets.evaluator import pick_device
from nets.models import MODELS, build_model, count_parameters
from nets.precision import autocast, resolve as resolve_precision
from nets.train import pick_memory_format, policy_value_loss, train_step

CPU = torch.device("cpu")


def training_device(spec: str) -> torch.device:
    """``--device``: the evaluator's choice of device (auto: CUDA where
    there is one), for a CPU or a CUDA device only."""
    try:
        device = pick_device(spec)
    except ValueError as e:         # CUDA asked for, but not here
        raise BenchError(f"--device {spec}: {e}") from None
    except RuntimeError:            # not a device name torch knows
        device = None
    if device is None or device.type not in ("cpu", "cuda"):
        raise BenchError(f"--device: unknown {spec!r} (cpu, cuda, auto)")
    return device


PHASES = ("batch", "forward", "backward", "clip", "optimiser")


def measure(model: str, sampler: D.PositionSampler, batch: int, precision: str,
            seconds: float, memory_format=torch.contiguous_format,
            device: torch.device = CPU, owners: O.OwnerTargets | None = None) -> dict:
    """Positions per second of ``model`` trained in ``precision`` (gradient
    norm clipped at 5, as the long runs train), and the seconds per step
    of each of PHASES: the batch (replay, planes, symmetry, value
    targets), the forward pass with the loss, the backward pass, the
    clipping and Adam's step; ``gflop``: the forward and backward passes'
    floating-point operations per position (PyTorch's count).  A value net
    learns ownership too where ``owners`` are given."""
    torch.manual_seed(0)
    net = build_model(model).train().to(device).to(memory_format=memory_format)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    values = getattr(net, "has_value", False)
    owners = owners if values else None
    totals = [0.0] * len(PHASES)

    def step(k: int, prec: str = precision) -> None:
        marks = [time.perf_counter()]
        x, y, c, where = sampler.batch(batch, k, info=True)
        v = torch.from_numpy(sampler.value_targets(where["game"], c)) if values else None
        own = (tuple(torch.from_numpy(a) for a in owners(where, c))
               if owners is not None else None)
        marks.append(time.perf_counter())
        train_step(net, opt, torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(c),
                   device, lambda: autocast(device, prec),
                   (lambda o, y, x, v, own=None: policy_value_loss(o, y, v, 1.0, own)) if values
                   else (lambda logits, y, x: torch.nn.functional.cross_entropy(logits, y)),
                   clip=5.0, v=v, memory_format=memory_format, marks=marks, own=own)
        for i in range(len(PHASES)):
            totals[i] += marks[i + 1] - marks[i]

    with FlopCounterMode(display=False) as flops:
        step(0, "fp32")
    for k in range(1, 3):
        step(k)
    totals[:] = [0.0] * len(PHASES)
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        step(3 + n)
        n += 1
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return {"positions_per_s": batch * n / (time.perf_counter() - t0),
            "phases": {p: t / n for p, t in zip(PHASES, totals)},
            "gflop": flops.get_total_flops() / batch / 1e9}


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
    owners, labelled = None, ""
    if args.labels:
        try:
            games, owned, counts = O.load_labels([p for p in args.labels.split(",") if p], cache)
        except (D.DataError, OSError) as e:
            raise BenchError(f"--labels: {e}") from None
        owners = O.OwnerTargets(games, owned, cache.size)
        labelled = f", ownership labels of {counts['used']:,} games for value nets"
    sampler = D.PositionSampler(cache, train_games, seed=1)
    device = training_device(args.device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    auto = resolve_precision("auto", device)
    print(f"nets.train steps on {args.cache} ({cache.n_games:,} games), batch {args.batch}, "
          f"Adam, features included{labelled}, on {device.type}, {args.seconds:g} s per cell "
          f"(auto precision: {auto[0]}, "
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
                fmt = pick_memory_format(f, net.config, device)
                layout = "channels_last" if fmt == torch.channels_last else "contiguous"
                speeds = []
                for p in precisions:
                    precision = resolve_precision(p, device)[0]
                    m = measure(model, sampler, args.batch, precision, args.seconds, fmt, device,
                                owners)
                    rows.append({"model": model, "threads": t, "precision": precision,
                                 "layout": layout, **m})
                    speeds.append(m["positions_per_s"])
                print(speed_table_row([model, f"{params:,}", t, layout], speeds), flush=True)
    if args.profile:
        print_profile(rows, args.batch)
    return rows


def print_profile(rows: list[dict], batch: int) -> None:
    """Where a step's time goes, one row per timed cell: milliseconds per
    step in each phase (and its share), and the TFLOP/s that the forward
    and backward passes achieve; the positions/s of a step less its batch."""
    print(f"\nOne step of batch {batch}, milliseconds (share of the step):\n")
    print("| network | threads | layout | precision | " + " | ".join(PHASES)
          + " | positions/s | without the batch | GFLOP a position | TFLOP/s in the passes |")
    print("|---" * (len(PHASES) + 8) + "|")
    for r in rows:
        ph = r["phases"]
        total = sum(ph.values())
        passes = ph["forward"] + ph["backward"]
        cells = [f"{ph[p] * 1e3:.1f} ({ph[p] / total:.0%})" for p in PHASES]
        tflops = r["gflop"] * batch / passes / 1e3 if passes > 0 else 0.0
        model_step = total - ph["batch"]
        alone = batch / model_step if model_step > 0 else 0.0
        print(f"| {r['model']} | {r['threads']} | {r['layout']} | {r['precision']} | "
              + " | ".join(cells)
              + f" | {r['positions_per_s']:.0f} | {alone:.0f} | {r['gflop']:.2f} | {tflops:.2f} |")


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
    ap.add_argument("--profile", action="store_true",
                    help="also print where a step's time goes (batch, forward, backward, "
                         "clipping, optimiser) and the TFLOP/s of the passes")
    ap.add_argument("--device", default="cpu",
                    help="cpu (default), cuda, or auto (cuda where there is one)")
    ap.add_argument("--labels", default=None,
                    help="final-ownership labels of the cache's games (JSON lines of "
                         "python -m bench.ownership_labels, several comma-separated): value "
                         "nets train their ownership head on them, as nets.train --labels")
    args = ap.parse_args(argv)
    try:
        run(args)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
