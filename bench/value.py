"""How well a value network judges held-out positions, beside the rollouts.

    python -m bench.value CHECKPOINT CACHE.npz [CACHE.npz ...] [--positions N]
        [--rollout-positions K] [--rollouts 1000] [--phases 0-49,...,150+]
        [--threads T] [--seed S] [--precision auto|fp32|bf16] [--komi-shifts=D,D,...]
        [--json FILE]

Each CACHE is a game cache of held-out games (``python -m nets.data build
data/test19 runs/test19.npz --val-fraction 0``).  Positions are drawn
uniformly (seeded, no symmetry) from the games whose result teaches a value
(a winner by count or resignation, komi known: ``GameCache.value_games``),
and sorted into the phases of the game by move number: 0-49, 50-99,
100-149, 150 on.  For each phase it prints:

* the network: the mean squared error of its probability that the player
  to move wins against the result (1 won, 0 lost), and the share of
  positions where it names the winner (probability above one half for the
  player who won);
* the rollouts: the same two figures for the engine's search without a
  network, ``--rollouts`` simulations (the winrate it reports: its best
  move's), on the first ``--rollout-positions`` positions of each phase
  (the network is scored on those too, so the two columns compare the
  same positions), and the positions where only one of the two names the
  winner, with the exact sign test's two-sided p of that split (McNemar's
  test: whether one names the winner more often than the other).

``--komi-shifts=-20,-10,0,10,20`` (with ``=``: the list starts with a
minus) asks how well the network reads komi: on the drawn positions of
games won by a count, whose result is known under any komi
(``GameCache.count_lead``), the value at the game's komi plus each shift
against the result the count gives under it: the cross-entropy (beside a
constant at the share of Black's wins under that komi, which knows
nothing of the position), the mean squared error and the share where it
names the winner (positions whose count would be a draw under that komi
left out).  The records' even games are nearly all at komi 6.5, where a
head that ignores komi loses little; dynamic komi in handicap games asks
more.

``--phases`` keeps some of the phases (by name, as the table prints them:
``--phases 150+`` judges every position from move 150 on with both, when
``--rollout-positions`` is as large as the phase).  95% Wilson intervals
for the shares.  Exit status 2 with a message naming the file for a
missing checkpoint, a network without a value head or a cache without
results.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from bench.stats import sign_test, wilson

PHASES = ((0, 50), (50, 100), (100, 150), (150, 10**6))


class ValueBenchError(Exception):
    """A problem with the inputs; the message names the path."""


def phase_name(lo: int, hi: int) -> str:
    return f"{lo}-{hi - 1}" if hi < 10**6 else f"{lo}+"


def sample(cache, n: int, seed: int):
    """(x, colors 0/1, targets (won, weight, komi), move numbers, games) of n
    positions of the cache's value games (fewer if it has fewer)."""
    from nets.data import PositionSampler

    games = np.flatnonzero(cache.value_games())
    if len(games) == 0:
        raise ValueBenchError(f"{cache.path} holds no game with a result a value can be "
                              f"checked against (rebuild it with python -m nets.data build)")
    sampler = PositionSampler(cache, games, positions_per_game=2, symmetries=False,
                              seed=seed, stream=7)
    x, _, col, where = sampler.batch(min(n, sampler.positions), 0, info=True)
    return x, col, sampler.value_targets(where["game"], col), where["move"], where["game"]


def network_values(model, x, col, komi, batch: int, precision: str) -> np.ndarray:
    """The value head's probability that the player to move wins."""
    import torch
    from nets.precision import autocast

    out = np.empty(len(x), np.float32)
    dev = torch.device("cpu")
    with torch.inference_mode():
        for a in range(0, len(x), batch):
            xb = torch.from_numpy(x[a:a + batch]).float()
            with autocast(dev, precision):
                _, v, _ = model(xb, torch.from_numpy(col[a:a + batch]),
                                torch.from_numpy(komi[a:a + batch]))
            out[a:a + batch] = torch.sigmoid(v.float()).numpy()
    return out


def rollout_winrate(cache, game: int, move: int, rollouts: int, seed: int) -> float:
    """The null search's winrate for the player to move at move number
    ``move`` of ``game`` (``rollouts`` simulations, one thread)."""
    from engine.config import SearchConfig
    from engine.patterns import load_gammas
    from engine.search import Search

    global _gammas
    if _gammas is None:
        _gammas = load_gammas()
    board, _ = cache.replay(game, move)
    board.to_move = int(cache.game_moves(game)[1][move])
    search = Search(SearchConfig(max_memory=32 << 20), _gammas, 1, seed)
    return search.run(board, float(cache.komi[game]), max_sims=rollouts).winrate


_gammas = None


def score(p: np.ndarray, won: np.ndarray) -> dict:
    n = len(p)
    hits = int(((p > 0.5) == (won > 0.5)).sum())
    lo, hi = wilson(hits, n)
    return {"positions": n, "mse": float(((p - won) ** 2).mean()) if n else 0.0,
            "winner": hits / n if n else 0.0, "winner_lo": lo, "winner_hi": hi}


def paired(p: np.ndarray, q: np.ndarray, won: np.ndarray) -> dict:
    """The positions where only the network (p) or only the rollouts (q)
    name the winner, and the exact sign test's two-sided p of that split."""
    a, b = (p > 0.5) == (won > 0.5), (q > 0.5) == (won > 0.5)
    only_p, only_q = int((a & ~b).sum()), int((~a & b).sum())
    return {"network_only": only_p, "rollouts_only": only_q, "p": sign_test(only_p, only_q)}


def run_set(model, path: str, args) -> dict:
    from nets.data import DataError, load_cache

    try:
        cache = load_cache(path)
    except DataError as e:
        raise ValueBenchError(str(e)) from None
    x, col, targets, moves, games = sample(cache, args.positions, args.seed)
    won, komi = targets[:, 0], targets[:, 2]
    t0 = time.perf_counter()
    values = network_values(model, x, col, komi, args.batch, args.precision)
    net_seconds = time.perf_counter() - t0
    rows = []
    for lo, hi in args.phases:
        idx = np.flatnonzero((moves >= lo) & (moves < hi))
        row = {"phase": phase_name(lo, hi), "network": score(values[idx], won[idx])}
        if args.rollout_positions > 0:
            sub = idx[:args.rollout_positions]
            t1 = time.perf_counter()
            rw = np.array([rollout_winrate(cache, int(games[i]), int(moves[i]), args.rollouts,
                                           args.seed + int(i)) for i in sub], np.float32)
            row["rollouts"] = score(rw, won[sub])
            row["network_same"] = score(values[sub], won[sub])
            row["paired"] = paired(values[sub], rw, won[sub])
            row["rollout_seconds"] = round(time.perf_counter() - t1, 1)
        rows.append(row)
    out = {"cache": path, "positions": int(len(x)), "network_seconds": round(net_seconds, 2),
           "phases": rows}
    if args.komi_shifts:
        out["komi_shifts"] = komi_shifts(model, cache, x, col, komi, games, args)
    return out


def komi_shifts(model, cache, x, col, komi, games, args) -> list[dict]:
    """For each shift, the value's scores on the positions of counted games
    at their komi plus the shift, against the count's result under it."""
    from nets.data import won_under_komi

    lead = cache.count_lead()[games]
    idx = np.flatnonzero(np.isfinite(lead))
    rows = []
    for d in args.komi_shifts:
        k = komi[idx] + np.float32(d)
        won = won_under_komi(lead[idx], k, col[idx])
        keep = won != 0.5               # a draw under this komi names no winner
        sub, k, won = idx[keep], k[keep], won[keep]
        black = lead[sub] > k
        p = network_values(model, x[sub], col[sub], k, args.batch, args.precision)
        q = np.clip(p, 1e-6, 1 - 1e-6)
        row = {"shift": d, **score(p, won)}
        xent = -(won * np.log(q) + (1 - won) * np.log(1 - q))
        row["xent"] = float(xent.mean()) if len(p) else 0.0
        row["black_wins"] = b = float(black.mean()) if len(p) else 0.0
        # a head that knew only how often Black wins under this komi
        row["constant_xent"] = float(-sum(f * np.log(f) for f in (b, 1 - b) if f > 0))
        rows.append(row)
    return rows


def table(result: dict, rollouts: int) -> str:
    lines = [f"{result['cache']}: {result['positions']} positions",
             "| moves | positions | network MSE | network names the winner | "
             f"on the rollout positions: network | {rollouts} rollouts | rollout MSE | "
             "right by the network alone / the rollouts alone (sign test p) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in result["phases"]:
        net = r["network"]
        cells = [r["phase"], str(net["positions"]), f"{net['mse']:.3f}",
                 f"{100 * net['winner']:.1f}% ({100 * net['winner_lo']:.1f}-"
                 f"{100 * net['winner_hi']:.1f})"]
        if "rollouts" in r:
            same, ro = r["network_same"], r["rollouts"]
            cells += [f"{100 * same['winner']:.1f}% of {same['positions']}",
                      f"{100 * ro['winner']:.1f}% ({100 * ro['winner_lo']:.1f}-"
                      f"{100 * ro['winner_hi']:.1f})", f"{ro['mse']:.3f}",
                      f"{r['paired']['network_only']} / {r['paired']['rollouts_only']} "
                      f"(p = {r['paired']['p']:.2g})"]
        else:
            cells += ["-", "-", "-", "-"]
        lines.append("| " + " | ".join(cells) + " |")
    if result.get("komi_shifts"):
        lines += ["", "counted games at another komi:",
                  "| komi shift | positions | Black wins under it | cross-entropy | "
                  "the same for a constant at Black's share | MSE | network names the winner |",
                  "|---|---|---|---|---|---|---|"]
        for r in result["komi_shifts"]:
            lines.append(f"| {r['shift']:+g} | {r['positions']} | {100 * r['black_wins']:.1f}% | "
                         f"{r['xent']:.3f} | {r['constant_xent']:.3f} | {r['mse']:.3f} | "
                         f"{100 * r['winner']:.1f}% ({100 * r['winner_lo']:.1f}-"
                         f"{100 * r['winner_hi']:.1f}) |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.value", description=__doc__.split("\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("caches", nargs="+", help="game caches of held-out games (.npz)")
    ap.add_argument("--positions", type=int, default=20000, help="positions per cache at most")
    ap.add_argument("--rollout-positions", type=int, default=100,
                    help="positions per phase the rollouts judge too (0: none)")
    ap.add_argument("--rollouts", type=int, default=1000, help="simulations of the null search")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16"))
    ap.add_argument("--phases", default=",".join(phase_name(*p) for p in PHASES),
                    help="the phases to judge, by name (default: all)")
    ap.add_argument("--komi-shifts", default="", metavar="D,D,...",
                    help="also judge the counted games' positions at their komi plus each "
                         "of these points")
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args(argv)
    try:
        args.komi_shifts = [float(d) for d in args.komi_shifts.split(",") if d.strip()]
    except ValueError:
        ap.error(f"--komi-shifts takes numbers separated by commas, not {args.komi_shifts!r}")
    if not all(np.isfinite(d) for d in args.komi_shifts):
        ap.error(f"--komi-shifts takes finite numbers of points, got {args.komi_shifts}")
    names = {phase_name(*p): p for p in PHASES}
    wanted = [w.strip() for w in args.phases.split(",") if w.strip()]
    if not wanted or any(w not in names for w in wanted):
        ap.error(f"--phases takes names among {', '.join(names)}, not {args.phases!r}")
    args.phases = [names[w] for w in names if w in wanted]
    if args.positions < 1 or args.rollout_positions < 0 or args.rollouts < 1:
        ap.error("--positions and --rollouts must be at least 1, --rollout-positions at least 0")
    try:
        import torch
        from nets.checkpoint import load_model
        from nets.precision import resolve

        torch.set_num_threads(args.threads)
        try:
            model, meta = load_model(args.checkpoint, "cpu")
        except (ValueError, OSError) as e:
            raise ValueBenchError(str(e)) from None
        if not getattr(model, "has_value", False):
            raise ValueBenchError(f"{args.checkpoint} has no value head")
        model = model.for_inference()
        args.precision = resolve(args.precision, torch.device("cpu"))[0]
        results = []
        for path in args.caches:
            result = run_set(model, path, args)
            results.append(result)
            print(table(result, args.rollouts), flush=True)
    except ValueBenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"checkpoint": args.checkpoint, "rollouts": args.rollouts,
                       "sets": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
