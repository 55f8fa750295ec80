"""The engine's final margins in a match's games, by GNU Go's estimate.

    python -m bench.margins DIR [DIR ...] [--gnugo /usr/games/gnugo]
        [--rules chinese|japanese] [--timeout 120] [--json FILE]

For every ``game-NNN.sgf`` that ``bench.match --sgf-dir DIR`` wrote (its
``game-NNN.json`` names the engine's colour), GNU Go's judgement of the
last position, ``gnugo --score estimate --chinese-rules -l FILE``: its
count of a game played out, its estimate of one that ended by resignation
(or forfeit) where it stopped.  The margin is the engine's: positive when
it leads.  Under Chinese rules GNU Go gives White a point per handicap
stone, which bench.match's Tromp-Taylor count does not.

Prints each game's margin and each folder's mean and median; with two
folders or more, the Mann-Whitney test of the first folder's margins
against each other's (two-sided, the normal approximation with ties
corrected): do the engine's margins differ between two matches, for
example with and without dynamic komi, beyond their win counts?

Exit status 0; 2 for a folder that is missing or holds no games, a game
without its JSON file, or a GNU Go that fails or answers something that is
not a score.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

from bench.stats import mann_whitney

DEFAULT_GNUGO = "/usr/games/gnugo"
SCORE = re.compile(r"(Black|White) wins by ([0-9.]+) points?")


class MarginError(Exception):
    """A folder, a game or GNU Go that gives no margin (exit status 2)."""


def estimate(gnugo: str, sgf: Path, rules: str, timeout: float) -> float:
    """GNU Go's score of the last position of ``sgf``: Black's lead."""
    cmd = [gnugo, "--score", "estimate", f"--{rules}-rules", "-l", str(sgf)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MarginError(f"{sgf}: {gnugo} failed: {exc}") from exc
    lines = out.stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    m = SCORE.search(last)
    if out.returncode != 0 or not (m or "jigo" in last.lower()):
        raise MarginError(f"{sgf}: {gnugo} exited {out.returncode} with no score: {last!r}")
    if not m:
        return 0.0
    return float(m.group(2)) * (1 if m.group(1) == "Black" else -1)


def folder_margins(folder: Path, gnugo: str, rules: str, timeout: float) -> list[dict]:
    """The engine's margin in each game of a bench.match SGF folder."""
    if not folder.is_dir():
        raise MarginError(f"{folder}: no such folder")
    games = sorted(folder.glob("game-*.sgf"))
    if not games:
        raise MarginError(f"{folder}: no game-*.sgf files (a bench.match --sgf-dir)")
    rows = []
    for sgf in games:
        meta = sgf.with_suffix(".json")
        try:
            colour = json.loads(meta.read_text())["engine_color"]
        except (OSError, ValueError, KeyError) as exc:
            raise MarginError(f"{meta}: the game's record names no engine_color ({exc})") from exc
        black_lead = estimate(gnugo, sgf, rules, timeout)
        rows.append({"game": sgf.stem, "engine_color": colour,
                     "margin": black_lead if colour == "B" else -black_lead})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.margins", description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path, metavar="DIR",
                    help="bench.match --sgf-dir folders")
    ap.add_argument("--gnugo", default=DEFAULT_GNUGO, help=f"GNU Go's program ({DEFAULT_GNUGO})")
    ap.add_argument("--rules", choices=("chinese", "japanese"), default="chinese")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds for GNU Go a game")
    ap.add_argument("--json", type=Path, help="write every game's margin here")
    args = ap.parse_args(argv)
    results, margins_of = {}, {}
    try:
        for folder in args.folders:
            rows = folder_margins(folder, args.gnugo, args.rules, args.timeout)
            results[str(folder)] = rows
            margins = margins_of[str(folder)] = [r["margin"] for r in rows]
            print(folder)
            for r in rows:
                print(f"  {r['game']}  engine {r['engine_color']}  {r['margin']:+.1f}")
            print(f"  {len(rows)} games: mean {statistics.mean(margins):+.1f}, "
                  f"median {statistics.median(margins):+.1f}")
    except MarginError as exc:
        print(f"bench.margins: {exc}", file=sys.stderr)
        return 2
    first, *others = list(results)
    for other in others:
        u, z, p = mann_whitney(margins_of[first], margins_of[other])
        print(f"Mann-Whitney, {first} against {other}: U = {u:g}, z = {z:+.2f}, "
              f"p = {p:.3f} (two-sided)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
