"""How often a GTP engine's move is the professional's, on held-out games.

    python -m bench.agreement --engine CMD [--engine CMD ...] [DATA_DIR]
        [--positions 100] [--seed 1] [--moves 1-400] [--timeout 600]
        [--json FILE]
    python -m bench.agreement --merge FILE [FILE ...] [--json FILE]

``DATA_DIR`` (default ``data/test19``) is searched recursively for ``*.sgf``;
its 19x19 games without handicap or setup stones are the population.  A
seeded uniform sample of ``--positions`` positions is drawn out of all the
non-pass moves of those games whose move number (1 for the first move) is
inside ``--moves``; every position has the same chance, whatever the length
of its game.

Each ``--engine`` is started once and, for every position, sent
``boardsize``, ``clear_board``, ``komi`` (the game's), the game's moves up to
the position as ``play`` commands, then ``reg_genmove`` for the player to
move: the move the engine would play there, with its own search, time
rules and resignation, and nothing played.  An engine without
``reg_genmove`` (``known_command`` says so; Pachi has none) is sent
``genmove`` and then ``undo``.  A hit is the professional's
move; a pass or a resignation never is.  Any GTP engine does (GNU Go, Pachi,
this engine under other settings or networks), so a search and the network
alone (``--policy-only``) can be set beside each other on the same
positions.

Prints, for each engine, the hits with their 95% Wilson interval, by game
phase (moves 1-50, 51-150, 151 on), and the seconds a position; with two
engines or more, each against the first on the same positions: the
positions only one of the two got right, and the exact two-sided sign test
(McNemar's) of that split; then, for every pair of engines, the positions
where both chose the same move.  This is move prediction, not strength: a
search may leave a professional's move for a better one.  What it shows is
where a search drifts away from the moves its network and the professionals
agree on, as its simulations grow, and how often two searches (two seeds,
two settings) choose alike.

``--merge`` prints the report of earlier runs from their ``--json`` files,
their engines in the order given, as one run would have: a long comparison
split over cores (one run a core, each with the same data, ``--positions``,
``--seed`` and ``--moves``) is read as a whole.  Files drawn from different
positions are refused.

Exit status 0; 2 for a folder with no usable game, an engine that cannot be
started, refuses a command or dies (the message names it), a ``--merge``
file that cannot be read or holds other positions, or bad options.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from bench.match import split_command
from bench.stats import sign_test, wilson
from engine.board import BLACK
from engine.sgf import load
from gtp.client import GtpClient, GtpClientError
from gtp.vertex import format_vertex

SIZE = 19
PHASES = (("1-50", 1, 50), ("51-150", 51, 150), ("151-", 151, 10 ** 9))
RUN_KEYS = {"data", "seed", "moves", "positions", "engines"}     # a --json file's


class AgreementError(Exception):
    """A folder, an engine or an option that gives no measurement (exit status 2)."""


def parse_range(text: str) -> tuple[int, int]:
    """'A-B' (or 'A-', from A on) as move numbers, 1 for a game's first move."""
    lo, sep, hi = text.partition("-")
    if not sep:
        raise AgreementError(f"--moves {text!r}: expected FIRST-LAST, as 1-400")
    try:
        first = int(lo)
        last = int(hi) if hi else 10 ** 9
    except ValueError:
        raise AgreementError(f"--moves {text!r}: expected FIRST-LAST, as 1-400") from None
    if first < 1 or last < first:
        raise AgreementError(f"--moves {text!r}: expected FIRST-LAST with 1 <= FIRST <= LAST")
    return first, last


def read_games(folder: Path) -> list[dict]:
    """The even 19x19 games of ``folder``: path, komi and moves as GTP
    vertices (None for a pass), in file-name order."""
    if not folder.is_dir():
        raise AgreementError(f"{folder}: no such folder")
    games = []
    for path in sorted(folder.rglob("*.sgf")):
        try:
            rec = load(str(path))
        except ValueError:
            continue            # a record sgfmill cannot read is not a position
        if (rec.size != SIZE or rec.setup or rec.handicap or not rec.moves
                or rec.moves[0][0] != BLACK):
            continue
        moves = [None if v is None else format_vertex(v, SIZE) for _, v in rec.moves]
        colours = ["b" if c == BLACK else "w" for c, _ in rec.moves]
        games.append({"path": str(path), "komi": rec.komi, "moves": moves, "colours": colours})
    if not games:
        raise AgreementError(f"{folder}: no 19x19 game without handicap in its *.sgf files")
    return games


def sample_positions(games: list[dict], n: int, seed: int,
                     moves: tuple[int, int]) -> list[dict]:
    """``n`` distinct positions, uniform over the non-pass moves numbered
    inside ``moves``, in a seeded order."""
    first, last = moves
    pool = [(g, i) for g, game in enumerate(games)
            for i, mv in enumerate(game["moves"])
            if mv is not None and first <= i + 1 <= last]
    if len(pool) < n:
        raise AgreementError(f"only {len(pool)} positions in --moves {first}-{last}; "
                             f"--positions {n} asks for more")
    chosen = random.Random(seed).sample(pool, n)
    return [{"game": games[g]["path"], "move_number": i + 1, "komi": games[g]["komi"],
             "colour": games[g]["colours"][i], "answer": games[g]["moves"][i],
             "history": list(zip(games[g]["colours"][:i], games[g]["moves"][:i]))}
            for g, i in chosen]


def ask(client: GtpClient, command: str, name: str) -> str:
    try:
        return client.send(command)
    except GtpClientError as e:
        raise AgreementError(f"engine {name!r}: {command!r}: {e.message}") from None


def engine_moves(command: str, positions: list[dict], timeout: float,
                 progress=None) -> list[dict]:
    """The engine's reg_genmove at every position, with its seconds."""
    try:
        argv = split_command(command)
        client = GtpClient(argv, timeout)
    except (ValueError, OSError) as e:
        raise AgreementError(f"engine {command!r} cannot be started: {e}") from None
    out = []
    try:
        # reg_genmove where the engine has it (GNU Go, this engine);
        # otherwise (Pachi) genmove, then undo of the move it played
        regress = ask(client, "known_command reg_genmove", command).strip() == "true"
        genmove = "reg_genmove" if regress else "genmove"
        for k, pos in enumerate(positions):
            ask(client, f"boardsize {SIZE}", command)
            ask(client, "clear_board", command)
            ask(client, f"komi {pos['komi']:g}", command)
            for colour, mv in pos["history"]:
                ask(client, f"play {colour} {mv or 'pass'}", command)
            started = time.perf_counter()
            move = ask(client, f"{genmove} {pos['colour']}", command).strip().upper()
            seconds = time.perf_counter() - started
            if not regress and move != "RESIGN":
                ask(client, "undo", command)
            out.append({"move": move, "hit": move == pos["answer"].upper(),
                        "seconds": round(seconds, 3)})
            if progress:
                progress(k + 1, len(positions), move, pos)
    finally:
        client.close()
    return out


def summary(positions: list[dict], answers: list[dict]) -> dict:
    hits = sum(a["hit"] for a in answers)
    n = len(answers)            # at least one: main asks for one position or more
    lo, hi = wilson(hits, n)
    phases = {}
    for name, first, last in PHASES:
        sel = [a["hit"] for p, a in zip(positions, answers) if first <= p["move_number"] <= last]
        phases[name] = {"hits": sum(sel), "positions": len(sel)}
    seconds = sum(a["seconds"] for a in answers) / n
    return {"hits": hits, "positions": n, "rate": hits / n,
            "interval": [lo, hi], "phases": phases, "seconds": seconds}


def paired(first: list[dict], other: list[dict]) -> dict:
    """Positions only the other engine got right, only the first did, and
    the sign test of that split."""
    only_other = sum(b["hit"] and not a["hit"] for a, b in zip(first, other))
    only_first = sum(a["hit"] and not b["hit"] for a, b in zip(first, other))
    return {"only_this": only_other, "only_first": only_first,
            "p": sign_test(only_other, only_first)}


def same_moves(results: list[dict]) -> list[list[int]]:
    """For every pair of engines, the positions where they chose the same move."""
    return [[sum(a["move"] == b["move"] for a, b in zip(x["answers"], y["answers"]))
             for y in results] for x in results]


def read_runs(files: list[str]) -> tuple[dict, list[dict]]:
    """The runs of ``--json`` files as one: the first file's settings and
    positions, and every file's engines in order."""
    runs = []
    for name in files:
        try:
            run = json.loads(Path(name).read_text())
        except (OSError, ValueError) as e:
            raise AgreementError(f"--merge {name}: cannot read it ({e})") from None
        if not isinstance(run, dict) or not RUN_KEYS <= run.keys():
            raise AgreementError(f"--merge {name}: not a --json file of bench.agreement")
        if runs and run["positions"] != runs[0]["positions"]:
            raise AgreementError(f"--merge {name}: other positions than {files[0]}'s "
                                 "(the same data, --positions, --seed and --moves draw the same)")
        runs.append(run)
    return runs[0], [res for run in runs for res in run["engines"]]


def print_report(results: list[dict]) -> None:
    print("| engine | hits | rate (95% interval) | moves 1-50 | 51-150 | 151- "
          "| seconds a position | against the first: only this / only the first, p |")
    print("|---|---|---|---|---|---|---|---|")
    for k, res in enumerate(results):
        s = res["summary"]
        lo, hi = s["interval"]
        cells = []
        for name, _, _ in PHASES:
            ph = s["phases"][name]
            cells.append(f"{ph['hits']}/{ph['positions']}")
        vs = "" if k == 0 else (f"{res['paired']['only_this']} / {res['paired']['only_first']}, "
                                f"{res['paired']['p']:.3f}")
        print(f"| `{res['engine']}` | {s['hits']}/{s['positions']} | {100 * s['rate']:.1f}% "
              f"({100 * lo:.1f}-{100 * hi:.1f}) | {' | '.join(cells)} | {s['seconds']:.2f} "
              f"| {vs} |")
    if len(results) > 1:
        print()
        print("| same move as engine | " + " | ".join(str(k + 1) for k in range(len(results)))
              + " |")
        print("|---" * (len(results) + 1) + "|")
        for k, row in enumerate(same_moves(results)):
            cells = ["" if j == k else f"{same}/{len(results[k]['answers'])}"
                     for j, same in enumerate(row)]
            print(f"| {k + 1} | " + " | ".join(cells) + " |")


def run_engines(args: argparse.Namespace) -> tuple[list[dict], list[dict]]:
    """The positions drawn, and every ``--engine``'s result on them."""
    if args.positions < 1:
        raise AgreementError("--positions must be at least 1")
    if args.timeout <= 0:
        raise AgreementError("--timeout must be positive")
    span = parse_range(args.moves)
    positions = sample_positions(read_games(Path(args.data)), args.positions, args.seed, span)
    print(f"# {len(positions)} positions of {args.data}, moves {args.moves}, "
          f"seed {args.seed}", flush=True)

    def progress(k, n, move, pos):
        print(f"#   {k}/{n}: {move} (professional {pos['answer']})", file=sys.stderr,
              flush=True)

    results = []
    for cmd in args.engine:
        print(f"# {cmd}", flush=True)
        answers = engine_moves(cmd, positions, args.timeout, progress)
        results.append({"engine": cmd, "answers": answers,
                        "summary": summary(positions, answers)})
    return positions, results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.agreement",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("data", nargs="?", default="data/test19",
                    help="folder of held-out SGF games (default data/test19)")
    ap.add_argument("--engine", action="append",
                    help="a GTP engine's command line (repeat to compare)")
    ap.add_argument("--merge", nargs="+", metavar="FILE",
                    help="report earlier runs' --json files as one run")
    ap.add_argument("--positions", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--moves", default="1-400",
                    help="move numbers positions are drawn from, FIRST-LAST (default 1-400)")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="seconds an engine may take to answer one command")
    ap.add_argument("--json", help="write the positions and every answer here")
    args = ap.parse_args(argv)
    try:
        if bool(args.engine) == bool(args.merge):
            raise AgreementError("give either --engine (one or more) or --merge")
        if args.merge:
            run, results = read_runs(args.merge)
            data, seed, moves, slim = run["data"], run["seed"], run["moves"], run["positions"]
            print(f"# {len(slim)} positions of {data}, moves {moves}, seed {seed}: "
                  f"{len(args.merge)} runs merged", flush=True)
        else:
            data, seed, moves = args.data, args.seed, args.moves
            positions, results = run_engines(args)
            slim = [{k: v for k, v in p.items() if k != "history"} for p in positions]
    except AgreementError as e:
        print(f"python -m bench.agreement: error: {e}", file=sys.stderr)
        return 2
    for res in results[1:]:
        res["paired"] = paired(results[0]["answers"], res["answers"])
    print_report(results)
    if args.json:
        Path(args.json).write_text(json.dumps({"data": data, "seed": seed, "moves": moves,
                                               "positions": slim, "engines": results},
                                              indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
