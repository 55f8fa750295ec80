"""Scoring real games: the engine's final_score and dead stones on held-out
games that ended by counting, with the ownership network at several doubts.

    python -m bench.scoring LABELS.jsonl DATA_DIR [LABELS DATA_DIR ...]
        [--ownership nets/weights/res6own.pt] [--network default|none|PATH]
        [--doubts 0,0.3,0.4,0.5,0.6] [--rollouts 3000] [--games N]
        [--count both|to-move] [--seed 1] [--json FILE]

LABELS are the files of ``python -m bench.ownership_labels`` for the games
under DATA_DIR (their GNU Go dead stones, and whether GNU Go's count names
the record's winner).  Each game is loaded as ``loadsgf`` does; the
engine's count is what ``final_score`` answers: two searches of the last
position, one with each colour to move (``--rollouts`` each, as many as
final_score spends), each chain judged by the search in which its opponent
moves first (``engine.player.count_ownership``), the stones that ownership
gives to the other colour (below -0.5 for black, above 0.5 for white)
removed, then area and komi.  ``--count to-move`` counts as the engine did
before 2026-11-25, by one search with the record's side to move.  The
ownership of a search is the playouts' blended with the network's
(``engine.search.blend_ownership``: the network's value on the points where
the playouts' is smaller in size than the doubt ``d``), for every ``d`` of
``--doubts`` on the same searches (``d = 0``: the playouts alone, the engine
without ``--ownership``).

Reported per doubt:

* winner: share of games whose count names the record's winner, among
  those with a record margin of at least 2.5 points (the rule sets of the
  records, area or territory, differ by a point or two) and over all;
* dead stones: share of games whose dead-stone list equals GNU Go's, among
  the games where GNU Go's count equals the record's result.

``--json FILE`` also lists, per doubt, the games counted for the loser
(file, the record's result, the engine's count, the record's rules) and
the games whose dead-stone list differs from GNU Go's where GNU Go's count
is the record's (the stones only the engine, and only GNU Go, calls dead).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from bench.stats import wilson
from engine.config import EngineConfig, SearchConfig
from engine.game import format_score
from engine.player import OWNERSHIP_ROLLOUTS, Player, count_ownership
from engine.search import blend_ownership


def _games(pairs: list[tuple[str, str]], limit: int | None) -> list[tuple[Path, dict]]:
    out = []
    for labels, data in pairs:
        for line in Path(labels).read_text().splitlines():
            d = json.loads(line)
            if "owner" in d:                  # labelled (a refused game has none)
                out.append((Path(data) / d["source"], d))
    if limit is not None:
        rng = np.random.default_rng(0)
        out = [out[i] for i in sorted(rng.choice(len(out), min(limit, len(out)), replace=False))]
    return out


def _signed(result: str) -> float:
    winner, margin = result[0], float(result[2:])
    return margin if winner == "B" else -margin


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.scoring",
                                 description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pairs", nargs="+", metavar="LABELS DATA_DIR")
    ap.add_argument("--ownership", default="default",
                    help="ownership network checkpoint ('default' the shipped one)")
    ap.add_argument("--network", default="default", help="policy network ('none': without)")
    ap.add_argument("--doubts", default="0,0.3,0.4,0.5,0.6",
                    help="the engine's own_doubt values to count with")
    ap.add_argument("--rollouts", type=int, default=OWNERSHIP_ROLLOUTS,
                    help="simulations of each search (default: final_score's)")
    ap.add_argument("--count", choices=("both", "to-move"), default="both",
                    help="both colours to move, as final_score (default), or the side to move alone")
    ap.add_argument("--seed", type=int, default=1, help="the searches' random seed")
    ap.add_argument("--games", type=int, default=None, help="a random subset of N games")
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if len(args.pairs) % 2:
        ap.error("give LABELS and DATA_DIR in pairs")
    pairs = list(zip(args.pairs[::2], args.pairs[1::2]))
    for labels, data in pairs:
        if not Path(labels).is_file():
            ap.error(f"labels file {labels} does not exist")
        if not Path(data).is_dir():
            ap.error(f"data folder {data} does not exist")
    try:
        doubts = [float(d) for d in args.doubts.split(",")]
    except ValueError:
        ap.error(f"--doubts {args.doubts!r}: comma-separated numbers expected")
    if any(not 0 <= d <= 1 for d in doubts):
        ap.error("--doubts must lie in 0..1")

    from engine.gtp import FrontOptions, load_network, load_ownership
    options = FrontOptions(network=None if args.network == "none" else args.network,
                           ownership=args.ownership, net_threads=args.threads)
    network, _ = load_network(options)
    own_net = load_ownership(options)
    if own_net is None:
        ap.error("no ownership network (nets/weights/res6own.pt is not there: give --ownership)")
    config = EngineConfig(rollouts=args.rollouts, seed=args.seed, search=SearchConfig(own_doubt=0.0))
    player = Player(config, network, None, own_net)
    player.warm_up()

    games = _games(pairs, args.games)
    stats = {d: {"win_big": 0, "n_big": 0, "win_all": 0, "n_all": 0, "dead_same": 0,
                 "n_dead": 0} for d in doubts}
    wrong: dict[float, list[dict]] = {d: [] for d in doubts}   # games counted for the loser
    differs: dict[float, list[dict]] = {d: [] for d in doubts}  # dead stones not GNU Go's
    started = time.time()
    for k, (path, label) in enumerate(games):
        player.loadsgf(str(path))
        board = player.game.board
        history = player.history()
        if args.count == "both":
            searched = [(result.playout_ownership, player.search.net_ownership(b, history))
                        for b, result in player.count_searches(board, history)]
        else:
            result = player.search.run(board, player.game.komi, max_sims=args.rollouts,
                                       history=history, counting=True)
            searched = [(result.playout_ownership, player.search.net_ownership(board, history))]
        record = _signed(label["result"])
        gnugo_dead = sorted(label["dead"])
        gnugo_right = label["score"] == record
        for d in doubts:
            owns = [blend_ownership(playouts, net, d) for playouts, net in searched]
            own = count_ownership(board, *owns) if len(owns) == 2 else owns[0]
            score = player._score_with_dead_removed(own)
            right = (score > 0) == (record > 0)
            if not right:
                wrong[d].append({"game": str(path), "result": label["result"],
                                 "count": format_score(score), "rules": label.get("rules")})
            st = stats[d]
            st["n_all"] += 1
            st["win_all"] += right
            if abs(record) >= 2.5:
                st["n_big"] += 1
                st["win_big"] += right
            if gnugo_right:
                st["n_dead"] += 1
                dead = sorted(board.name(p) for p in player._dead_stones(own))
                st["dead_same"] += dead == gnugo_dead
                if dead != gnugo_dead:
                    differs[d].append({"game": str(path), "result": label["result"],
                                       "engine_only": sorted(set(dead) - set(gnugo_dead)),
                                       "gnugo_only": sorted(set(gnugo_dead) - set(dead))})
        if (k + 1) % 50 == 0:
            print(f"{k + 1} games, {(time.time() - started) / (k + 1):.2f} s a game",
                  file=sys.stderr)

    searches = "one search of each colour to move" if args.count == "both" else \
        "one search of the side to move"
    print(f"{len(games)} held-out games that ended by counting; {searches}, "
          f"{args.rollouts} rollouts each")
    print("| own_doubt | winner, margin >= 2.5 | winner, all | dead stones = GNU Go's |")
    print("|---|---|---|---|")
    for d in doubts:
        st = stats[d]
        cells = []
        for hit, n in (("win_big", "n_big"), ("win_all", "n_all"), ("dead_same", "n_dead")):
            lo, hi = wilson(st[hit], st[n])
            cells.append(f"{st[hit] / max(1, st[n]):.1%} of {st[n]} ({lo:.1%}-{hi:.1%})")
        print(f"| {d:g} | " + " | ".join(cells) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps({"games": len(games), "rollouts": args.rollouts,
                                               "count": args.count,
                                               "stats": {str(d): s for d, s in stats.items()},
                                               "wrong": {str(d): w for d, w in wrong.items()},
                                               "dead_differs": {str(d): w
                                                                for d, w in differs.items()}},
                                              indent=1))
    player.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
