"""Point accuracy of an ownership network on held-out games.

    python -m bench.ownership CKPT CACHE.npz LABELS.jsonl [CACHE LABELS ...]
        [--positions 20000] [--threads 1] [--json FILE]

CACHE is a game cache of held-out games (``python -m nets.data build
data/test19 runs/test19.npz --val-fraction 0``) and LABELS their final
owners (``python -m bench.ownership_labels data/test19 LABELS``); only the
games whose label agrees with the record count.  Positions are drawn from
all of each set's games (up to 20 per game, no symmetry), and a point
counts when its final owner is black or white (dame and seki points are
left out).  Printed: point accuracy over all positions and by move number
(early: moves 1-80, middle: 81-160, late: 161 on), and on each game's final
position (after its last move, the position the engine scores), with the
number of positions and a 95% interval over the positions (points of one
position are not independent: the interval treats each position's accuracy
as one sample).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

from engine.features import planes
from nets.checkpoint import load_model
from nets.data import DataError, load_cache
from nets.models import OwnershipView
from nets.ownership import BUCKETS, OwnershipSampler, load_labels
from nets.precision import autocast, resolve


def accuracy(model, x, t, c, batch: int = 256, precision: str = "fp32") -> tuple[np.ndarray, np.ndarray]:
    """(right points, owned points) per position."""
    right, counted = np.zeros(len(t)), np.zeros(len(t))
    cpu = torch.device("cpu")
    with torch.inference_mode():
        for a in range(0, len(t), batch):
            xb = torch.from_numpy(x[a:a + batch]).float()
            with autocast(cpu, precision):
                logits = model(xb, torch.from_numpy(c[a:a + batch])).float().numpy()
            tb = t[a:a + batch]
            decided = tb != 0.5
            right[a:a + len(tb)] = (((logits > 0) == (tb > 0.5)) & decided).sum(1)
            counted[a:a + len(tb)] = decided.sum(1)
    return right, counted


def final_positions(cache, games, owners):
    """(x, target, colour) of each game's last position, the player to
    move's side."""
    xs, ts, cs = [], [], []
    for g, own in zip(games, owners):
        board, history = cache.replay(int(g))
        xs.append(planes(board, history[:4], rank=9, dtype=np.uint8))
        sign = 1.0 if board.to_move == 1 else -1.0
        ts.append(0.5 + 0.5 * sign * own.astype(np.float32))
        cs.append(board.to_move - 1)
    return np.stack(xs), np.stack(ts), np.array(cs, np.int64)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.ownership",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("sets", nargs="+", metavar="CACHE LABELS")
    ap.add_argument("--positions", type=int, default=20000, help="positions per set at most")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16"))
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if len(args.sets) % 2:
        ap.error("give CACHE and LABELS in pairs")
    torch.set_num_threads(args.threads)
    try:
        model, meta = load_model(args.checkpoint)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if getattr(model, "has_value", False):
        model = OwnershipView(model)        # a value net's ownership head
    elif model.config.get("task") != "ownership":
        print(f"error: {args.checkpoint} is not an ownership network", file=sys.stderr)
        return 2
    model = model.for_inference()
    precision, why = resolve(args.precision, torch.device("cpu"))
    print(f"{args.checkpoint}: {meta.get('model')}, step {meta.get('steps')}, "
          f"{precision} ({why})")
    print("| set | games | positions | all | early (1-80) | middle (81-160) | late (161-) "
          "| final positions |")
    print("|---|---|---|---|---|---|---|---|")
    report = {}
    for cache_path, labels in zip(args.sets[::2], args.sets[1::2]):
        try:
            cache = load_cache(cache_path)
            games, owners, counts = load_labels(labels, cache)
        except DataError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        sampler = OwnershipSampler(cache, games, owners, positions_per_game=20,
                                   symmetries=False, seed=7)
        n = min(args.positions, sampler.sampler.positions)
        x, t, c, where = sampler.batch(n, 0)
        right, counted = accuracy(model, x, t, c, precision=precision)
        moves = where["move"]
        cells, row = [], {}
        for name, (lo, hi) in [("all", (0, 10 ** 6))] + list(BUCKETS.items()):
            sel = (moves >= lo) & (moves < hi)
            if not sel.any():
                cells.append("-")
                continue
            acc = right[sel].sum() / counted[sel].sum()
            per = right[sel] / np.maximum(counted[sel], 1)
            half = 1.96 * per.std(ddof=1) / np.sqrt(sel.sum()) if sel.sum() > 1 else 0.0
            cells.append(f"{acc:.1%} ± {half:.1%} ({int(sel.sum())})")
            row[name] = {"accuracy": acc, "half_interval": half, "positions": int(sel.sum()),
                         "points": int(counted[sel].sum())}
        fx, ft, fc = final_positions(cache, games, owners)
        fr, fn = accuracy(model, fx, ft, fc, precision=precision)
        per = fr / np.maximum(fn, 1)
        half = 1.96 * per.std(ddof=1) / np.sqrt(len(per)) if len(per) > 1 else 0.0
        cells.append(f"{fr.sum() / fn.sum():.1%} ± {half:.1%} ({len(per)})")
        row["final"] = {"accuracy": fr.sum() / fn.sum(), "half_interval": half,
                        "positions": len(per), "points": int(fn.sum())}
        name = Path(cache_path).stem
        print(f"| {name} | {counts['used']} | {n} | " + " | ".join(cells) + " |")
        report[name] = {"games": counts["used"], "labels": counts, **row}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
