"""Move-prediction accuracy of a policy-net checkpoint on held-out games.

    python -m bench.accuracy CHECKPOINT [DATA_DIR] [--games G] [--positions N]
        [--seed S] [--batch 256] [--threads T] [--precision auto|fp32|bf16]
        [--compare-precision] [--symmetries 1|8] [--against CHECKPOINT] [--json FILE]

``DATA_DIR`` (default ``data/test19``, the held-out Tom.com games; the KGS
held-out set is ``data/test19_kgs``) is searched recursively for ``*.sgf``.
It may also be a game cache of them (``python -m nets.data build
data/test19 test19.npz --val-fraction 0``, a file ending in ``.npz``): every
game of it counts (``--games`` does not apply), and sgfmill is not needed,
as on a lent GPU machine.  From SGF files the 19x19 games are read, or for a
net that does not serve 19x19 (res9) the games of the largest size it serves.

Which positions:

* ``--games G`` reads a seeded random subset of G of the SGF files (all of
  them without ``--games``);
* ``--positions N`` then takes a seeded uniform sample of N distinct
  positions out of all the non-pass moves of those games (every position
  has the same chance, whatever the length of its game); without
  ``--positions`` every non-pass move of the games is a position.  With
  neither option a sample of ``DEFAULT_POSITIONS`` positions of all the
  games is taken.

The games go through the project's one replay path: ``nets.data`` builds a
temporary game cache of them (same filters, same BR/WR rank parsing and
defaults, same move encoding as for training) and its replay kernel
(``nets.data._emit``) writes the input planes of the chosen positions, with
the rank planes of the player to move and no symmetry (identity only).
With ``--symmetries 8`` each position is shown to the net in the board's 8
symmetries and its probabilities are their mean, as the engine's
policy-only play takes them (``--policy-symmetries``).
Passes are replayed but are positions only for a net with a pass output
(the 9x9 ``res9``), whose top-k ranks the pass among the legal points.

Scoring: the net's logits for the player to move, with the illegal points
(``LEGAL`` plane zero: occupied, suicide, simple ko) masked out; a position
is a top-k hit when the move played is among the k best legal points.  Ties
are broken by ``torch.topk``.  Each rate comes with a 95% Wilson interval
(positions counted as independent, which they are not quite: positions of
one game are correlated, so the true uncertainty is somewhat wider).  The
mean log-loss of the move played (nats, over the legal points) is printed
too.

``--against OTHER`` scores a second checkpoint on the same positions, in
the same arithmetic, and compares the two position by position: the top-1
difference with its paired 95% interval and the exact McNemar (sign) test
of the positions that one net gets right and the other wrong, and the
mean difference of the log-loss with its 95% interval.  Paired, a
difference is measured far more finely than the two nets' own intervals
suggest (on 20,000 positions two nets of about 48% differ by some 4,000
positions' first choices, which puts the top-1 difference's interval at
about +-0.6 points rather than the +-1.4 of the two Wilson intervals),
which is what a decision to ship one net in place of another needs.

Speed: positions per second of inference (forward pass and scoring, with
``--threads`` torch threads, ``--batch`` positions a call), and overall
(replay and planes included; the cache build is timed apart, and
a first untimed position takes numba's and torch's start-up costs).

Exit status 0 on success, 2 with a message naming the path for a missing
or unreadable checkpoint or an empty or missing data directory.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.stats import sign_test, wilson
from engine.board import ZOBRIST
from engine.features import N_PLANES
from engine.priors import symmetry, symmetry_inverse
from nets import data as D

DEFAULT_DATA = "data/test19"
DEFAULT_POSITIONS = 10_000
TOPS = (1, 5, 10)


class AccuracyError(Exception):
    """A problem with the inputs; the message names the path."""


# --------------------------------------------------------------------------
# which positions


def choose_positions(cache: D.GameCache, n: int | None, seed: int, passes: bool = False):
    """(games, picks, starts): the games holding chosen positions (increasing),
    the move numbers of the chosen positions game after game (increasing in
    each game) and the offsets of each game's picks, the layout of
    ``nets.data._emit``.  n None (or at least the number of positions): every
    non-pass move (every move with ``passes``); else a uniform sample of n
    distinct positions."""
    counts = cache.position_counts(passes)
    total = int(counts.sum())
    games, picks = [], []
    if n is None or n >= total:
        for g in np.flatnonzero(counts):
            games.append(g)
            picks.append(cache.game_positions(g, passes))
    else:
        rng = np.random.default_rng([seed, 1])
        idx = np.sort(rng.choice(total, size=n, replace=False))
        cum = np.cumsum(counts)
        owner = np.searchsorted(cum, idx, side="right")
        rank_in_game = idx - (cum[owner] - counts[owner])
        for g in np.unique(owner):
            picks.append(cache.game_positions(g, passes)[rank_in_game[owner == g]])
            games.append(g)
    starts = np.zeros(len(games) + 1, np.int64)
    starts[1:] = np.cumsum([len(p) for p in picks])
    picks = np.concatenate(picks).astype(np.int64) if picks else np.zeros(0, np.int64)
    return np.asarray(games, np.int64), picks, starts


def replay_chunks(cache: D.GameCache, games, picks, starts, chunk: int):
    """Yield (x uint8 (k, N_PLANES, N, N), y, colour) for consecutive groups of
    games holding at least ``chunk`` positions (the last group fewer), from
    the replay kernel of nets.data (no symmetry)."""
    sampler = D.PositionSampler(cache, symmetries=False)   # its boards and tables
    size = cache.size
    g0 = 0
    while g0 < len(games):
        g1 = int(np.searchsorted(starts, starts[g0] + chunk, side="left"))
        g1 = min(max(g1, g0 + 1), len(games))
        sub_starts = starts[g0:g1 + 1] - starts[g0]
        sub_picks = picks[starts[g0]:starts[g1]]
        k = int(sub_starts[-1])
        out = np.empty((k, N_PLANES, size * size), np.uint8)
        y = np.empty(k, np.int64)
        col = np.empty(k, np.int64)
        syms = np.zeros(k, np.int64)
        got = D._emit(sampler.b, sampler.s, sampler.sb, sampler.ss, ZOBRIST, size,
                      sampler.moves, sampler.colours, sampler.offsets, sampler.ranks,
                      games[g0:g1], sub_picks, sub_starts, syms, sampler.gather,
                      sampler.scatter, sampler.hist, sampler.tmp,
                      sampler.tmp.reshape(N_PLANES, -1), out, y, col)
        assert got == k, (got, k)
        yield out.reshape(k, N_PLANES, size, size), y, col
        g0 = g1


# --------------------------------------------------------------------------
# scoring


def score_batch(model, x, y, col, precision: str = "fp32", symmetries: int = 1) -> dict:
    """Top-k hits, summed log-loss, the count of played moves that the
    LEGAL plane calls illegal (should be 0) and the top-1 points of one
    batch, the net run in ``precision`` (fp32 or bf16).  ``symmetries`` 8:
    the net's probabilities are the mean over the board's 8 symmetries
    (each image's logits mapped back, masked and soft-maxed, then
    averaged), as the engine's policy-only play takes them."""
    import torch

    from nets.models import legal_mask, masked_log_softmax
    from nets.precision import autocast

    xt = torch.from_numpy(x)
    yt = torch.from_numpy(y)
    n = x.shape[-1]
    logps = []
    legal = None
    for k in range(symmetries):
        image = torch.from_numpy(np.ascontiguousarray(symmetry(x, k)))
        with torch.no_grad(), autocast(torch.device("cpu"), precision):
            logits = model(image.float(), torch.from_numpy(col))
        with torch.no_grad():
            logits = logits.float()
            board = symmetry_inverse(logits[:, :n * n].reshape(-1, n, n).numpy(), k)
            logits = torch.cat([torch.from_numpy(np.ascontiguousarray(board)).reshape(-1, n * n),
                                logits[:, n * n:]], dim=1)
            if legal is None:
                legal = legal_mask(xt, logits.shape[1])
            logps.append(masked_log_softmax(logits, legal))
    with torch.no_grad():
        logp = logps[0] if symmetries == 1 else \
            torch.logsumexp(torch.stack(logps), dim=0) - float(np.log(symmetries))
        top = logp.topk(max(TOPS), dim=1).indices
        match = top == yt[:, None]
        played = logp.gather(1, yt[:, None]).squeeze(1)
    finite = torch.isfinite(played)
    return {**{k: int(match[:, :k].any(dim=1).sum()) for k in TOPS},
            "nll": float(-played[finite].double().sum()),
            "illegal_target": int((~legal.gather(1, yt[:, None])).sum()),
            "best": top[:, 0].numpy(), "hit1": match[:, 0].numpy(),
            "nll_each": (-played).double().numpy()}


def _board_size(model) -> int:
    """The size of the games read from SGF files: 19, or the largest the
    net serves where it does not serve 19 (res9: 9)."""
    cfg = getattr(model, "config", {})
    lo, hi = int(cfg.get("min_size", 19)), int(cfg.get("max_size", 19))
    return 19 if lo <= 19 <= hi else hi


def evaluate(checkpoint, data_dir=DEFAULT_DATA, *, games: int | None = None,
             positions: int | None = None, seed: int = 0, batch: int = 256,
             threads: int | None = None, precision: str = "auto", compare: bool = False,
             symmetries: int = 1, against=None, log=sys.stderr) -> dict:
    """The accuracy summary (a JSON-able dict).  ``precision``: the net's
    arithmetic (auto, fp32, bf16; nets/precision.py).  ``compare``: score in
    fp32 and in bf16 on the same positions, reporting both and how often
    their top-1 moves agree (then ``precision`` is ignored).  ``symmetries``:
    1, or 8 for the mean over the board's symmetries.  ``against``: a second
    checkpoint, scored on the same positions and compared position by
    position (``"against"`` in the summary).  AccuracyError for unusable
    inputs."""
    import torch

    from nets.checkpoint import load_model
    from nets.precision import resolve as resolve_precision

    if batch < 1:
        raise AccuracyError("--batch must be at least 1")
    if symmetries not in (1, 8):
        raise AccuracyError("--symmetries must be 1 or 8")
    if games is not None and games < 1:
        raise AccuracyError("--games must be at least 1")
    if positions is not None and positions < 1:
        raise AccuracyError("--positions must be at least 1")
    if games is None and positions is None:
        positions = DEFAULT_POSITIONS
    if against is not None and compare:
        raise AccuracyError("--against and --compare-precision do not go together")
    from_cache = Path(data_dir).suffix == ".npz"
    try:
        if from_cache:          # a game cache made by nets.data build (no sgfmill needed)
            if not Path(data_dir).is_file():
                raise AccuracyError(f"cache file {data_dir} does not exist")
            files = []
        else:
            files = D.find_sgf_files(data_dir)      # fails fast on an empty folder
    except D.DataError as e:
        raise AccuracyError(str(e)) from None
    try:
        model, meta = load_model(checkpoint)
    except ValueError as e:
        raise AccuracyError(str(e)) from None
    other = None
    if against is not None:
        try:
            other, other_meta = load_model(against)
        except ValueError as e:
            raise AccuracyError(str(e)) from None
        if bool(getattr(other, "has_pass", False)) != bool(getattr(model, "has_pass", False)):
            raise AccuracyError(f"{against} and {checkpoint} do not both have a pass output, "
                                f"so they are not scored on the same positions")
    if threads is not None:
        if threads < 1:
            raise AccuracyError("--threads must be at least 1")
        torch.set_num_threads(threads)
    workers = threads if threads is not None else torch.get_num_threads()

    t0 = time.perf_counter()
    try:
        if from_cache:
            cache = D.load_cache(data_dir)
            built = {"files": cache.n_games, **cache.summary}
            files = range(cache.n_games)
        else:
            with tempfile.TemporaryDirectory(prefix="accuracy-") as tmp:
                cache_path = Path(tmp) / "games.npz"
                built = D.build_cache(data_dir, cache_path, limit=games, val_fraction=0.0,
                                      size=_board_size(model), seed=seed, workers=workers,
                                      log=log)
                cache = D.load_cache(cache_path)
    except D.DataError as e:
        raise AccuracyError(str(e)) from None
    build_s = time.perf_counter() - t0
    for net, path in ((model, checkpoint), (other, against)):
        if net is None:
            continue
        try:
            net.check_size(cache.size)
        except (AttributeError, ValueError) as e:
            raise AccuracyError(f"checkpoint {path}: {e}") from None

    passes = bool(getattr(model, "has_pass", False))
    g, picks, starts = choose_positions(cache, positions, seed, passes)
    n = len(picks)
    if n == 0:
        raise AccuracyError(f"no positions (non-pass moves) in the games under {data_dir}")
    try:
        used = ["fp32", "bf16"] if compare else \
            [resolve_precision(precision, torch.device("cpu"))[0]]
    except ValueError as e:
        raise AccuracyError(str(e)) from None
    main = used[-1]                     # the headline figures: bf16 when comparing
    # warm-up, untimed: the replay kernel's compilation (or cache load) and
    # torch's first call
    first = next(replay_chunks(cache, g[:1], picks[:1], np.array([0, 1]), 1))
    for p in used:
        score_batch(model, *first, precision=p, symmetries=symmetries)
    if other is not None:
        score_batch(other, *first, precision=main, symmetries=symmetries)
    # --against: the other net's hits, and the paired counts and sums
    pair = {"hits": {k: 0 for k in TOPS}, "nll": 0.0, "only_this": 0, "only_other": 0,
            "d_sum": 0.0, "d_sq": 0.0, "d_n": 0}
    hits = {p: {k: 0 for k in TOPS} for p in used}
    nll = 0.0
    illegal = 0
    agree = 0
    infer_s = 0.0
    done = 0
    t1 = last = time.perf_counter()
    for x_all, y_all, c_all in replay_chunks(cache, g, picks, starts, 4 * batch):
        for a in range(0, len(y_all), batch):
            best = []
            for p in used:
                ti = time.perf_counter()
                r = score_batch(model, x_all[a:a + batch], y_all[a:a + batch],
                                c_all[a:a + batch], precision=p, symmetries=symmetries)
                if p == main:
                    infer_s += time.perf_counter() - ti
                    nll += r["nll"]
                    illegal += r["illegal_target"]
                for k in TOPS:
                    hits[p][k] += r[k]
                best.append(r["best"])
            if other is not None:
                o = score_batch(other, x_all[a:a + batch], y_all[a:a + batch],
                                c_all[a:a + batch], precision=main, symmetries=symmetries)
                for k in TOPS:
                    pair["hits"][k] += o[k]
                pair["nll"] += o["nll"]
                pair["only_this"] += int((r["hit1"] & ~o["hit1"]).sum())
                pair["only_other"] += int((o["hit1"] & ~r["hit1"]).sum())
                d = r["nll_each"] - o["nll_each"]
                d = d[np.isfinite(d)]
                pair["d_sum"] += float(d.sum())
                pair["d_sq"] += float((d * d).sum())
                pair["d_n"] += len(d)
            agree += int((best[0] == best[-1]).sum())
        done += len(y_all)
        now = time.perf_counter()
        if log is not None and now - last > 10:
            last = now
            print(f"  {done}/{n} positions, top-1 {hits[main][1] / done:.4f} "
                  f"({done / (now - t1):.0f} positions/s)", file=log, flush=True)
    total_s = time.perf_counter() - t1

    def rates(h: dict) -> dict:
        out = {}
        for k in TOPS:
            lo, hi = wilson(h[k], n)
            out[f"top{k}"] = {"hits": h[k], "rate": h[k] / n, "wilson95": [lo, hi]}
        return out

    acc = rates(hits[main])
    if compare:
        acc["fp32"] = rates(hits["fp32"])
        acc["top1_agreement"] = {"same": agree, "rate": agree / n}
    cfg = meta.get("config", {})
    extra = {"against": compare_pair(against, other_meta, pair, n)} \
        if other is not None else {}
    return {
        "checkpoint": str(checkpoint),
        "model": meta.get("model"), "layers": cfg.get("layers"), "width": cfg.get("width"),
        "steps": meta.get("steps"),
        "data_dir": str(data_dir), "files": len(files), "files_read": built["files"],
        "games": cache.n_games, "games_with_positions": int(len(g)),
        "skipped": built["skipped"], "ranks": built["rank_histogram"],
        "ranks_unknown": built["ranks_unknown"],
        "sample": ("all moves" if passes else "all non-pass moves")
        if n == cache.positions(passes=passes)
        else f"drawn uniformly from {cache.positions(passes=passes)}",
        "positions": n, "seed": seed, "games_limit": games, "positions_limit": positions,
        **acc,
        "log_loss": nll / n,
        "illegal_targets": illegal,
        "threads": torch.get_num_threads(), "batch": batch, "precision": main,
        "symmetries": symmetries,
        "inference_seconds": infer_s, "inference_positions_per_s": n / infer_s,
        "overall_positions_per_s": n / total_s, "replay_seconds": total_s - infer_s,
        "cache_seconds": build_s,
        **extra,
    }


def compare_pair(path, meta: dict, pair: dict, n: int) -> dict:
    """The --against part of the summary: the other net's rates, and the
    paired top-1 difference (this net's minus the other's) with its 95%
    interval and the exact McNemar p, and the log-loss difference with its
    95% interval (normal, over the positions whose log-loss is finite for
    both)."""
    a, b = pair["only_this"], pair["only_other"]
    diff = (a - b) / n
    se = math.sqrt(max(0.0, a + b - (a - b) ** 2 / n)) / n
    m = pair["d_n"]
    mean = pair["d_sum"] / m if m else 0.0
    var = (pair["d_sq"] / m - mean * mean) * m / (m - 1) if m > 1 else 0.0
    half = 1.96 * math.sqrt(max(0.0, var) / m) if m else 0.0
    return {
        "checkpoint": str(path), "model": meta.get("model"), "steps": meta.get("steps"),
        **{f"top{k}": {"hits": h, "rate": h / n, "wilson95": list(wilson(h, n))}
           for k, h in pair["hits"].items()},
        "log_loss": pair["nll"] / n,
        "top1_only_this": a, "top1_only_other": b,
        "top1_difference": diff, "top1_difference95": [diff - 1.96 * se, diff + 1.96 * se],
        "top1_mcnemar_p": sign_test(a, b),
        "log_loss_difference": mean, "log_loss_difference95": [mean - half, mean + half],
    }


# --------------------------------------------------------------------------
# report


def format_table(r: dict) -> str:
    net = r["model"] or "?"
    if r["layers"] and r["width"]:
        net += f", {r['layers']} x {r['width']}"
    if r["steps"] is not None:
        net += f", step {r['steps']}"
    skipped = sum(r["skipped"].values())
    lines = [
        f"checkpoint   {r['checkpoint']} ({net})",
        f"data dir     {r['data_dir']}",
        f"games        {r['games']} of {r['files_read']} files read "
        f"({r['files']} in the folder; seed {r['seed']}"
        + (f"; {skipped} skipped: {r['skipped']}" if skipped else "") + ")",
        f"positions    {r['positions']} ({r['sample']}; "
        + ("no symmetry" if r.get("symmetries", 1) == 1 else "the mean of the 8 symmetries")
        + ", illegal points masked)",
        "",
        "             accuracy   95% Wilson interval",
    ]
    for k in TOPS:
        a = r[f"top{k}"]
        lo, hi = a["wilson95"]
        lines.append(f"top-{k:<2d}       {100 * a['rate']:6.2f}%   "
                     f"{100 * lo:6.2f}% - {100 * hi:6.2f}%")
    lines += [
        f"log-loss     {r['log_loss']:.4f} nats per move (over the legal points)",
        "",
        f"speed        {r['inference_positions_per_s']:.0f} positions/s inference "
        f"({r['precision']}, {r['threads']} thread{'s' if r['threads'] != 1 else ''}, "
        f"batch {r['batch']}); "
        f"{r['overall_positions_per_s']:.0f} positions/s with replay and planes; "
        f"game cache {r['cache_seconds']:.1f} s",
    ]
    if "top1_agreement" in r:
        a, f = r["top1_agreement"], r["fp32"]
        lines.append(f"fp32 vs bf16 top-1 {100 * f['top1']['rate']:.2f}% vs "
                     f"{100 * r['top1']['rate']:.2f}% "
                     f"({100 * (r['top1']['rate'] - f['top1']['rate']):+.2f} points), top-5 "
                     f"{100 * f['top5']['rate']:.2f}% vs {100 * r['top5']['rate']:.2f}%; "
                     f"same top-1 move in {a['same']} of {r['positions']} positions "
                     f"({100 * a['rate']:.2f}%)")
    if "against" in r:
        o = r["against"]
        lo, hi = o["top1_difference95"]
        dlo, dhi = o["log_loss_difference95"]
        lines += [
            "",
            f"against      {o['checkpoint']} ({o['model'] or '?'}"
            + (f", step {o['steps']}" if o["steps"] is not None else "") + "), the same "
            f"positions: top-1 {100 * o['top1']['rate']:.2f}%, top-5 "
            f"{100 * o['top5']['rate']:.2f}%, top-10 {100 * o['top10']['rate']:.2f}%, "
            f"log-loss {o['log_loss']:.4f}",
            f"difference   top-1 {100 * o['top1_difference']:+.2f} points ({100 * lo:+.2f} to "
            f"{100 * hi:+.2f}, paired 95%): {o['top1_only_this']} positions right by this "
            f"net alone, {o['top1_only_other']} by the other alone (McNemar p "
            f"{o['top1_mcnemar_p']:.3g}); log-loss {o['log_loss_difference']:+.4f} nats "
            f"({dlo:+.4f} to {dhi:+.4f})",
        ]
    if r["illegal_targets"]:
        lines.append(f"warning: {r['illegal_targets']} moves played were illegal by the "
                     "LEGAL plane (counted as misses)")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.accuracy",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint", help="checkpoint file (nets.checkpoint)")
    ap.add_argument("data_dir", nargs="?", default=DEFAULT_DATA,
                    help=f"folder of SGF games, searched recursively (default {DEFAULT_DATA})")
    ap.add_argument("--games", type=int, default=None,
                    help="read a seeded random subset of G files (default: all)")
    ap.add_argument("--positions", type=int, default=None,
                    help="seeded uniform sample of N positions (default: every non-pass "
                         f"move with --games, else {DEFAULT_POSITIONS})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads and cache-building processes (default: torch's)")
    ap.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16"),
                    help="the net's arithmetic (default: bf16 where the CPU is fast at it)")
    ap.add_argument("--compare-precision", action="store_true",
                    help="score in fp32 and bf16 and report how often their top-1 agrees")
    ap.add_argument("--symmetries", type=int, default=1, choices=(1, 8),
                    help="8: the mean of the net's probabilities over the board's 8 "
                         "symmetries (default 1: the position as it is)")
    ap.add_argument("--against", default=None, metavar="CHECKPOINT",
                    help="also score this checkpoint on the same positions and compare the "
                         "two position by position (paired intervals, McNemar's test)")
    ap.add_argument("--json", default=None, help="also write the summary to FILE")
    args = ap.parse_args(argv)
    try:
        r = evaluate(args.checkpoint, args.data_dir, games=args.games,
                     positions=args.positions, seed=args.seed, batch=args.batch,
                     threads=args.threads, precision=args.precision,
                     compare=args.compare_precision, symmetries=args.symmetries,
                     against=args.against)
    except AccuracyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(format_table(r))
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(r, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
