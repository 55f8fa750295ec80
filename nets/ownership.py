"""Training data and measures of the ownership net (GoCNN, seed 002).

A label is the final owner of every point of a game that ended by counting
(``python -m bench.ownership_labels``: GNU Go's dead stones removed, then
area; one JSON line per game, ``owner`` = N*N characters X / O / ., rows
from the top).  :func:`load_labels` joins them with a game cache built from
the same folder (``python -m nets.data build DATA_DIR CACHE.npz``; the
``source`` paths match) and keeps the games whose label agrees with the
record's result.

Positions: the cache's positions of those games (:class:`nets.data.PositionSampler`,
the 8 symmetries applied to the planes and the label alike), each with the
final owner seen from the player to move: 1 the player to move, 0 the
opponent, 0.5 neither (dame, the shared liberties of a seki).  The net
learns it with a per-point binary cross-entropy on its logits; the 0.5
points teach it to stay undecided there.

Measures: point accuracy = share of the points with an owner (0 or 1) whose
probability is on the owner's side of 0.5, over all positions and by move
number: early (moves 1-80), middle (81-160), late (161 on).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import IterableDataset, get_worker_info

from nets.data import DataError, GameCache, PositionSampler, apply_symmetry, load_cache

#: move-number buckets of the accuracy table: [start, end) of the move index
BUCKETS = {"early": (0, 80), "middle": (80, 160), "late": (160, 10 ** 6)}
_VALUE = {"X": 1, "O": -1, ".": 0}


def pack_labels(paths, out, cache: GameCache | None = None) -> int:
    """Write the agreeing labels of the labels file(s) ``paths`` compactly
    (``np.savez_compressed``: ``source`` and ``owner`` int8 (games, N*N),
    +1 black, -1 white, 0 neither): about a twentieth of the JSON lines, so
    that the labels travel to a lent GPU machine beside the cache; with
    ``cache``, only the labels of its games (a subset's).  Returns the
    number of games written."""
    labels = {}
    for p in ([paths] if isinstance(paths, (str, Path)) else paths):
        labels.update(read_labels(p))
    keep = sorted(s for s, d in labels.items() if d.get("agrees"))
    if cache is not None:
        games = {s.decode("utf-8") for s in cache.source}
        keep = [s for s in keep if s in games]
    if not keep:
        raise DataError(f"no agreeing label in {paths}"
                        + (f" of a game in {cache.path}" if cache is not None else ""))
    sizes = {len(labels[s].get("owner", "")) for s in keep}
    if len(sizes) != 1 or any(set(labels[s]["owner"]) - set(_VALUE) for s in keep):
        raise DataError(f"{paths}: owner maps of different sizes or with other than X, O, .")
    table = np.zeros(256, np.int8)
    for ch, v in _VALUE.items():
        table[ord(ch)] = v
    owner = np.stack([table[np.frombuffer(labels[s]["owner"].encode(), np.uint8)] for s in keep])
    np.savez_compressed(out, source=np.array([s.encode() for s in keep]), owner=owner)
    return len(keep)


def read_labels(path) -> dict[str, dict]:
    """source -> label line of a labels file (JSON lines, or a file of
    :func:`pack_labels`, whose games all agree); DataError names a bad file."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"ownership labels {path} do not exist")
    if path.suffix == ".npz":
        try:
            with np.load(path) as z:
                sources, owners = z["source"], z["owner"]
        except (OSError, ValueError, KeyError) as e:
            raise DataError(f"{path} is not a packed labels file ({e})") from None
        chars = np.array(["O", ".", "X"])
        return {s.decode(): {"source": s.decode(), "agrees": True,
                             "owner": "".join(chars[o.astype(np.int64) + 1])}
                for s, o in zip(sources, owners)}
    labels = {}
    for i, line in enumerate(path.read_text().splitlines(), 1):
        try:
            d = json.loads(line)
            labels[d["source"]] = d
        except (ValueError, KeyError, TypeError):
            raise DataError(f"{path} line {i} is not a label line") from None
    return labels


def load_labels(paths, cache: GameCache) -> tuple[np.ndarray, np.ndarray, dict]:
    """(games, owners, counts): the cache's games with an agreeing label in
    the labels file(s) ``paths`` (one path, or several: e.g. the outputs of
    labellers run side by side with different --seed; a game labelled
    twice counts once, by its last label), their owners int8 (games, N*N)
    +1 black, -1 white, 0 neither, and how many labels were used,
    disagreed, or were not in the cache."""
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    labels, file_of = {}, {}
    for p in paths:
        for source, d in read_labels(p).items():
            labels[source] = d
            file_of[source] = p
    path = ", ".join(str(p) for p in paths)
    n2 = cache.size * cache.size
    index = {s.decode("utf-8"): g for g, s in enumerate(cache.source)}
    games, owners = [], []
    counts = {"labels": len(labels), "used": 0, "disagree": 0, "not_in_cache": 0}
    for source, d in labels.items():
        if not d.get("agrees"):
            counts["disagree"] += 1
            continue
        g = index.get(source)
        if g is None:
            counts["not_in_cache"] += 1
            continue
        owner = d.get("owner", "")
        if len(owner) != n2 or set(owner) - set(_VALUE):
            raise DataError(f"{file_of[source]}: the owner map of {source} is not {n2} "
                            f"of X, O, .")
        games.append(g)
        owners.append([_VALUE[ch] for ch in owner])
    counts["used"] = len(games)
    if not games:
        raise DataError(f"no game of {path} with an agreeing label is in the cache {cache.path}")
    order = np.argsort(games)
    return (np.asarray(games, np.int64)[order], np.asarray(owners, np.int8)[order], counts)


class OwnerTargets:
    """Final-ownership targets for positions drawn from any games, labelled
    or not (a value net learns ownership beside its policy and value):
    ``(where, col)`` of :meth:`PositionSampler.batch` ->
    (target float32 (n, N*N): the final owner from the side of the player
    to move, 1 it, 0 the opponent, 0.5 neither, under the position's
    symmetry; weight float32 (n,), 1 for a labelled game's position, 0 for
    the others, whose target is 0.5 everywhere).  :class:`OwnershipSampler`
    uses it too, on labelled games only."""

    def __init__(self, games: np.ndarray, owners: np.ndarray, size: int):
        self.size = size
        self.owner_of = {int(g): o for g, o in zip(games, owners)}

    def __call__(self, where: dict, col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n, size = len(col), self.size
        target = np.full((n, size * size), 0.5, np.float32)
        weight = np.zeros(n, np.float32)
        for i in range(n):
            own = self.owner_of.get(int(where["game"][i]))
            if own is None:
                continue
            own = apply_symmetry(int(where["sym"][i]), own.reshape(size, size)).reshape(-1)
            # +1 black .. -1 white  ->  1 the player to move .. 0 the opponent
            sign = 1.0 if col[i] == 0 else -1.0
            target[i] = 0.5 + 0.5 * sign * own
            weight[i] = 1.0
        return target, weight


def masked_loss(logits: torch.Tensor, target: torch.Tensor, weight: torch.Tensor,
                reduction: str = "mean") -> torch.Tensor:
    """:func:`loss_fn` over the positions of weight 1 only (the mean over
    them; 0 when there are none), or their sum with reduction="sum"."""
    per_position = F.binary_cross_entropy_with_logits(logits.float(), target,
                                                      reduction="none").mean(dim=1) * weight
    if reduction == "sum":
        return per_position.sum()
    return per_position.sum() / weight.sum().clamp(min=1.0)


class OwnershipSampler:
    """Batches (x uint8 planes, target float32 (n, N*N), colour, where)
    from the labelled games, ``where`` as in PositionSampler's (game, move
    number, symmetry per position); a function of (seed, stream, step)."""

    def __init__(self, cache: GameCache, games: np.ndarray, owners: np.ndarray, *,
                 positions_per_game: int = 8, symmetries: bool = True, seed: int = 0,
                 stream: int = 0, late: float = 0.0):
        self.targets = OwnerTargets(games, owners, cache.size)
        self.sampler = PositionSampler(cache, games, positions_per_game=positions_per_game,
                                       symmetries=symmetries, seed=seed, stream=stream,
                                       late=late)

    def batch(self, n: int, step: int = 0):
        x, _, col, where = self.sampler.batch(n, step, info=True)
        return x, self.targets(where, col)[0], col, where


def main(argv=None) -> int:
    """``python -m nets.ownership pack LABELS.jsonl [...] OUT.npz [--cache C.npz]``."""
    import argparse
    import sys
    ap = argparse.ArgumentParser(prog="python -m nets.ownership",
                                 description="Ownership labels in a compact file.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack", help="the agreeing labels of JSON-lines files -> OUT.npz")
    p.add_argument("labels", nargs="+")
    p.add_argument("out")
    p.add_argument("--cache", default=None,
                   help="keep only the labels of this game cache's games (a subset's)")
    args = ap.parse_args(argv)
    try:
        cache = None if args.cache is None else load_cache(args.cache)
        n = pack_labels(args.labels, args.out, cache)
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{args.out}: {n} games ({Path(args.out).stat().st_size / 1e6:.1f} MB)")
    return 0


def fixed_positions(cache, games, owners, n: int, seed: int = 12345):
    """A fixed set of n positions (no symmetry), e.g. for validation."""
    sampler = OwnershipSampler(cache, games, owners, positions_per_game=4, symmetries=False,
                               seed=seed, stream=1 << 20)
    x, t, c, where = sampler.batch(min(n, sampler.sampler.positions), 0)
    return x, t, c, where["move"].astype(np.int64)


class OwnershipDataset(IterableDataset):
    """Endless batches ``(x, target, colour)`` as tensors, batch number
    ``start_step + i`` i-th whatever the number of loader workers."""

    def __init__(self, cache, games, owners, batch_size: int, *, start_step: int = 0,
                 positions_per_game: int = 8, seed: int = 0, stream: int = 0,
                 late: float = 0.0):
        self.args = (cache, games, owners)
        self.batch_size, self.start_step = batch_size, start_step
        self.kw = dict(positions_per_game=positions_per_game, seed=seed, stream=stream,
                       late=late)

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (0, 1) if info is None else (info.id, info.num_workers)
        sampler = OwnershipSampler(*self.args, **self.kw)
        step = self.start_step + wid
        while True:
            x, t, c, _ = sampler.batch(self.batch_size, step)
            yield torch.from_numpy(x), torch.from_numpy(t), torch.from_numpy(c)
            step += nw


def loss_fn(logits: torch.Tensor, target: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    """Per-point binary cross-entropy, averaged over the points (summed over
    the positions with reduction="sum")."""
    per_point = F.binary_cross_entropy_with_logits(logits.float(), target, reduction="none")
    per_position = per_point.mean(dim=1)
    return per_position.sum() if reduction == "sum" else per_position.mean()


@torch.no_grad()
def evaluate(model, val, device, autocast, batch: int = 256) -> dict:
    """Validation loss and point accuracy, overall and by move bucket."""
    x_all, t_all, c_all, m_all = val
    was_training = model.training
    model.eval()
    n = len(t_all)
    loss_sum = 0.0
    right = np.zeros(n)
    counted = np.zeros(n)
    for a in range(0, n, batch):
        x = torch.from_numpy(x_all[a:a + batch]).to(device).float()
        t = torch.from_numpy(t_all[a:a + batch]).to(device)
        c = torch.from_numpy(c_all[a:a + batch]).to(device)
        with autocast():
            logits = model(x, c)
        logits = logits.float()
        loss_sum += loss_fn(logits, t, "sum").item()
        decided = t != 0.5
        hit = ((logits > 0) == (t > 0.5)) & decided
        right[a:a + len(t)] = hit.sum(1).cpu().numpy()
        counted[a:a + len(t)] = decided.sum(1).cpu().numpy()
    model.train(was_training)
    out = {"val_loss": loss_sum / n, "point_acc": right.sum() / max(1, counted.sum()),
           "val_positions": n}
    for name, (lo, hi) in BUCKETS.items():
        sel = (m_all >= lo) & (m_all < hi)
        out[f"acc_{name}"] = float(right[sel].sum() / counted[sel].sum()) if sel.any() else None
    return out


__all__ = ["BUCKETS", "pack_labels", "read_labels", "load_labels", "OwnerTargets", "masked_loss",
           "OwnershipSampler", "OwnershipDataset", "fixed_positions", "loss_fn", "evaluate"]


if __name__ == "__main__":
    raise SystemExit(main())
