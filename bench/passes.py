"""Flag premature passes in game records.

    python -m bench.passes SGF_OR_DIR ... [--player NAME] [--rollouts 3000]
        [--seed 1] [--json FILE]

Every pass in the main line of every game (``.sgf`` files, folders searched
recursively) is judged in the position before it, by the rules the
engine's genmove follows: a pass is premature when the count with dead
stones removed loses for the player who passed, or, when the opponent had
not just passed, when points are still open (an empty point that neither
side surely owns, playable without self-atari: a dame, an open border) or
stones are still in a fight.  A pass where the player could only have
filled its own eyes is never premature (genmove passes there too, even
on a lost count).  Ownership and dead stones come from the
engine's playouts (``--rollouts`` simulations, no network), the judge the
engine itself uses.  ``--player`` checks only the passes of the player
whose PB/PW name contains NAME (case-insensitive), e.g. ``delayed-go``
for bench.match's games.

Prints one line per premature pass (file, move number, colour, reasons)
and a summary; the exit code is 0 when none was found, 1 when some were,
2 on bad arguments or unreadable files.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sgfmill import sgf as sgfmill_sgf

from engine.board import BLACK, PASS
from engine.config import EngineConfig
from engine.player import Player


def sgf_files(paths: list[str]) -> list[Path]:
    out = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            out += sorted(path.rglob("*.sgf"))
        elif path.is_file():
            out.append(path)
        else:
            raise ValueError(f"{text}: no such file or folder")
    return out


def names(path: Path) -> dict[str, str]:
    """PB / PW of a record ('' where missing)."""
    try:
        root = sgfmill_sgf.Sgf_game.from_bytes(path.read_bytes()).get_root()
    except ValueError as e:
        raise ValueError(f"cannot read SGF file {path}: {e}") from None
    return {c: root.get(prop) if root.has_property(prop) else ""
            for c, prop in (("b", "PB"), ("w", "PW"))}


def check_game(path: Path, player_name: str | None, rollouts: int, seed: int) -> tuple[int, list]:
    """(passes judged, premature passes) of one record: each premature
    pass as {file, move, color, faults}."""
    who = names(path)
    engine = Player(EngineConfig(board_size=19, seed=seed, rollouts=rollouts, resign=0.0))
    engine.loadsgf(str(path))
    moves = list(engine.game.moves)       # (colour, point) of the whole main line
    judged, flagged = 0, []
    for i, (c, p) in enumerate(moves):
        if p != PASS:
            continue
        color = "b" if c == BLACK else "w"
        if player_name and player_name.lower() not in who[color].lower():
            continue
        engine.loadsgf(str(path), i + 1)  # the position before move i + 1 (1-based)
        judged += 1
        faults = engine.pass_faults(color)
        if faults:
            flagged.append({"file": str(path), "move": i + 1, "color": color,
                            "player": who[color], "faults": faults})
    return judged, flagged


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.passes", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", metavar="SGF_OR_DIR")
    ap.add_argument("--player", default=None, metavar="NAME",
                    help="check only the passes of the player whose name contains NAME")
    ap.add_argument("--rollouts", type=int, default=3000,
                    help="playouts judging each position (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default %(default)s)")
    ap.add_argument("--json", help="also write the findings here")
    args = ap.parse_args(argv)
    if args.rollouts < 1:
        ap.error("--rollouts must be at least 1")
    try:
        files = sgf_files(args.paths)
    except ValueError as e:
        ap.error(str(e))
    total, found, errors = 0, [], []
    for path in files:
        try:
            judged, flagged = check_game(path, args.player, args.rollouts, args.seed)
        except ValueError as e:
            errors.append(str(e))
            print(f"error: {e}", file=sys.stderr)
            continue
        total += judged
        for f in flagged:
            print(f"{f['file']}: move {f['move']}, {f['color']} ({f['player']}) passed: "
                  f"{'; '.join(f['faults'])}")
        found += flagged
    print(f"{len(files)} games, {total} passes judged, {len(found)} premature, "
          f"{len(errors)} unreadable")
    if args.json:
        Path(args.json).write_text(json.dumps({"games": len(files), "passes": total,
                                               "premature": found, "errors": errors}, indent=1))
    if errors:
        return 2
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
