"""Matches side by side: their win counts, and Fisher's exact test between them.

    python -m bench.compare DIR DIR [DIR ...] [--early MOVES] [--json FILE]

Reads the ``game-NNN.json`` records that ``bench.match --sgf-dir DIR``
wrote (a match still in play counts the games it has finished) and prints
for each folder: the engine's wins, its win rate with the 95% Wilson
interval, how the games ended, and the moves at which the engine resigned
(those before ``--early``, 100 by default, counted apart: a handicap
game's White should not resign a young game).  Then, for every folder
after the first, Fisher's exact test of the first folder's wins against
that one's: one-sided (the first wins more often) and two-sided.  This is
the test for two arms of an experiment, for example a handicap match with
and without dynamic komi (docs/handicap.md).

A draw counts as half a win in the rate, as in bench.match's summary, and
as no win in the test; games voided by a referee error are left out.

Exit status 0; 2 for a folder that is missing or holds no game records, or
a record that cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench.match import finished_games, summarise
from bench.stats import fisher_exact

# what bench.match's summarise reads of a finished game's record
RECORD_KEYS = ("game", "engine_color", "engine_won", "end", "moves", "seconds", "error")


class CompareError(Exception):
    """A folder or a record that gives no count (exit status 2)."""


def folder_counts(folder: Path, early: int) -> dict:
    """The counts of one bench.match folder's finished games: bench.match's
    own summary of them, and the moves at which the engine resigned."""
    if not folder.is_dir():
        raise CompareError(f"{folder}: no such folder")
    for path in sorted(folder.glob("game-[0-9][0-9][0-9].json")):
        try:
            rec = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise CompareError(f"{path}: not a bench.match game record ({exc})") from exc
        missing = [k for k in RECORD_KEYS if not isinstance(rec, dict) or k not in rec]
        if missing:
            raise CompareError(f"{path}: not a bench.match game record "
                               f"(no {', '.join(missing)})")
    records = list(finished_games(folder).values())
    s = summarise(records)
    if not s["games"]:
        raise CompareError(f"{folder}: no game-NNN.json records (a bench.match --sgf-dir)")
    resigned = sorted(r["moves"] for r in records
                      if r["end"] == "resignation" and r["engine_won"] is False)
    return {**{k: s[k] for k in ("games", "wins", "draws", "win_rate", "wilson95", "ended_by")},
            "engine_resigned_at": resigned,
            "engine_resigned_early": sum(1 for m in resigned if m < early)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.compare",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path, metavar="DIR",
                    help="bench.match --sgf-dir folders, the first compared with each other")
    ap.add_argument("--early", type=int, default=100, metavar="MOVES",
                    help="count the engine's resignations before this move (100)")
    ap.add_argument("--json", type=Path, help="write the counts and the tests here")
    args = ap.parse_args(argv)
    if len(args.folders) < 2:
        ap.error("give two folders or more: the first is compared with each other")
    counts = {}
    try:
        for folder in args.folders:
            c = counts[str(folder)] = folder_counts(folder, args.early)
            lo, hi = c["wilson95"]
            draws = f", {c['draws']} drawn" if c["draws"] else ""
            print(f"{folder}: {c['wins']} of {c['games']} won{draws}, "
                  f"{100 * c['win_rate']:.1f}% ({100 * lo:.1f}-{100 * hi:.1f}%)")
            print("  ended by: " + ", ".join(f"{k} {v}" for k, v in sorted(c["ended_by"].items())))
            at = ", ".join(map(str, c["engine_resigned_at"])) or "never"
            print(f"  the engine resigned at moves: {at} "
                  f"({c['engine_resigned_early']} before move {args.early})")
    except CompareError as exc:
        print(f"bench.compare: {exc}", file=sys.stderr)
        return 2
    first, *others = list(counts)
    tests = {}
    for other in others:
        a, b = counts[first], counts[other]
        one, two = fisher_exact(a["wins"], a["games"], b["wins"], b["games"])
        tests[other] = {"one_sided": round(one, 4), "two_sided": round(two, 4)}
        print(f"Fisher's exact test, {first} ({a['wins']}/{a['games']}) against {other} "
              f"({b['wins']}/{b['games']}): p = {one:.3f} one-sided (the first wins more), "
              f"{two:.3f} two-sided")
    if args.json:
        args.json.write_text(json.dumps({"folders": counts, "fisher_against_first": tests},
                                        indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
