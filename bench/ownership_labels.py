"""Final-ownership labels of real games, for the ownership network.

    python -m bench.ownership_labels DATA_DIR OUT.jsonl [--games N]
        [--gnugo "/usr/games/gnugo --mode gtp --level 1" | --net CKPT [--leads]]
        [--seed S] [--timeout SEC]

Which games: the SGF files under DATA_DIR (any board size, no handicap or
setup stones) whose result names a score
(``RE[B+3.5]``, ``RE[W+0.5]``): games that ended by counting.  Their last
position is finished, so the dead stones are the only question, and GNU Go
answers it (``final_status_list dead``), as in the GoCNN paper.  Resigned
games are left out: their last position is unfinished, and GNU Go's answer
there is a play-out of its own (16 s a game at level 1, 71 s at level 10,
with different territories at the two levels); lost on time and draws are
left out too.  Files are taken in a random order fixed by ``--seed`` (the
sources mixed), ``--games`` of them at most.

A label: the last position with the stones GNU Go lists as dead turned into
the capturer's stones, then Tromp-Taylor area: a point belongs to the colour
of its stone, or to the colour that alone reaches its empty region; the
other points (dame, and the liberties shared in a seki, whose stones GNU Go
leaves alive) belong to neither.  It is checked against the record: the
score of the labelled position must name the record's winner, counted by the
record's rules (area with the record's komi for ``RU`` Chinese and for Fox
games, which are played under Chinese rules; GNU Go's own ``final_score``,
Japanese counting with prisoners, for the others).  A game that fails is
written with ``"agrees": false`` and its reason; the trainer uses only the
games that agree.

``--net CKPT`` asks an ownership network (e.g. ``nets/weights/res6own.pt``)
instead of GNU Go, a few milliseconds a game instead of a second, so that
every counted game of a large set gets a label: a stone is dead when the
network gives its point to the other colour.  The territory count of a
record not played under Chinese rules is then the engine's own: empty
points and dead stones of a region only one colour reaches, plus the
prisoners taken in the game and the dead stones.  A network misjudges
more often than GNU Go (res6own's counts came within a point of the
record's in 69% of 300 test19 games, GNU Go's in 98%; their owner maps
agreed on 99.1% of the points), so its label agrees only when its count
comes within a point of the record's margin, not merely names the winner.
The line's ``by`` names the labeller (``gnugo`` or the checkpoint's file
name).

Output: one JSON line per game (appended and flushed; a rerun skips the
files already in OUT, so the job resumes after a stop)::

    {"source": "tygem/2011-06/444174429.sgf", "result": "W+0.5", "komi": 6.5,
     "rules": "japanese", "moves": 254, "dead": ["H18", ...],
     "score": -0.5, "agrees": true,
     "owner": "XXXX.OOO..."}    # N*N characters, rows from the top: X black,
                               # O white, . neither

``source`` is the path relative to DATA_DIR, as in the game cache of
``python -m nets.data build DATA_DIR``, which the trainer joins it with.

``--net CKPT --leads`` labels the resigned games instead (``RE[B+R]``,
``RE[W+Resign]``), not with an owner map but with the lead the network
expects Black to end with on the board: the sum over the last position's
points of P(Black owns it) - P(White owns it), before komi, as a count by
area.  A counted game's lead is known from its record (the margin plus the
komi); a resigned game's is not, and these estimates give
``nets.train --komi-spread`` games that were not close (``--leads``).  The
line agrees when the lead less the komi favours the record's winner::

    {"source": "...", "result": "W+R", "komi": 6.5, "rules": "japanese",
     "moves": 187, "by": "res6own.pt", "lead": -23.41, "agrees": true}
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import time
from pathlib import Path

import numpy as np
from sgfmill import sgf as sgfmill

from engine.board import (BLACK, COLOR, EMPTY, MAX_SIZE, PASS, S_NEMPTY, WHITE, Board,
                          IllegalMove, area_fill)
from engine.priors import root_planes
from engine.sgf import parse
from gtp.client import GtpClient, GtpClientError
from gtp.vertex import format_vertex, parse_vertex
from nets.data import DataError, find_sgf_files, normalise_komi

DEFAULT_GNUGO = "/usr/games/gnugo --mode gtp --level 1"
#: a network's label agrees only when its count is this close to the record's
NET_MAX_ERROR = 1.0
_SCORE = re.compile(r"^([BW])\+(\d+(?:\.\d+)?)$")
_CHAR = {1: "X", -1: "O", 0: "."}


def record_result(root) -> tuple[str, float] | None:
    """(winner 'B'/'W', margin) of a result that names a score, else None."""
    text = root.get("RE").strip() if root.has_property("RE") else ""
    m = _SCORE.match(text.replace(" ", ""))
    if not m:
        return None
    return m.group(1), float(m.group(2))


def record_resignation(root) -> str | None:
    """The winner 'B'/'W' of a game won by resignation, else None."""
    text = root.get("RE").strip().replace(" ", "").upper() if root.has_property("RE") else ""
    if text[2:] in ("R", "RESIGN") and text[:2] in ("B+", "W+"):
        return text[0]
    return None


def record_rules(root, source: str) -> str:
    """'chinese' (area counting) or 'japanese' (territory and prisoners)."""
    rules = root.get("RU").lower() if root.has_property("RU") else ""
    if "chinese" in rules or "cn" == rules or source.startswith("fox"):
        return "chinese"
    return "japanese"


def owner_map(board: Board, dead: list[int]) -> np.ndarray:
    """+1 black, -1 white, 0 neither per point, rows from the top (the
    planes' layout): ``dead`` stones become the capturer's, then area."""
    b = board.copy()
    for p in dead:
        b.b[COLOR, p] = BLACK + WHITE - b.b[COLOR, p]
    own = np.zeros(b.b.shape[1])
    area_fill(b.b, b.s, own, np.empty(b.b.shape[1], np.int32))
    n = board.size
    out = np.zeros(n * n, np.int8)
    for p in board.points():
        col, row = board.coords(p)
        out[(n - 1 - row) * n + col] = int(own[p])
    return out


def territory_score(board: Board, own: np.ndarray, dead: list[int],
                    prisoners: dict[int, int], komi: float) -> float:
    """Japanese counting, black minus white: each colour's territory (the
    points of ``own``, rows from the top, that are not its own living
    stones: empty points and the dead stones in its area) plus the
    prisoners it took in the game and its opponent's ``dead`` stones."""
    n = board.size
    score = float(prisoners[BLACK] - prisoners[WHITE]) - komi
    dead_set = set(dead)
    for p in board.points():
        col, row = board.coords(p)
        owner = int(own[(n - 1 - row) * n + col])
        k = board.color(p)
        if owner != 0 and (k == EMPTY or p in dead_set):
            score += owner
        if p in dead_set:
            score += 1 if k == WHITE else -1
    return score


def replay(path: Path, source: str, resigned: bool = False):
    """(label so far, board at the end, prisoners taken by each colour,
    the moves most recent first) of a counted game (with ``resigned``, of a
    resigned one); None for another; a finished label that disagrees when
    the record cannot be replayed."""
    data = path.read_bytes()
    root = sgfmill.Sgf_game.from_bytes(data).get_root()
    if resigned:
        winner = record_resignation(root)
        res = None if winner is None else (winner, "R")
    else:
        res = record_result(root)
    if res is None:
        return None
    rec = parse(data, str(path))
    if not 2 <= rec.size <= MAX_SIZE or rec.setup or rec.handicap >= 2:
        return None
    komi = normalise_komi(rec.komi)
    out = {"source": source, "result": f"{res[0]}+{res[1]:g}" if not resigned else f"{res[0]}+R",
           "komi": komi,
           "rules": record_rules(root, source), "moves": len(rec.moves)}
    board = Board(rec.size)
    prisoners = {BLACK: 0, WHITE: 0}
    moves = []
    try:
        for c, v in rec.moves:
            p = PASS if v is None else board.point(*v)
            empty = int(board.s[S_NEMPTY])
            board.play(p, c)
            if p != PASS:
                prisoners[c] += int(board.s[S_NEMPTY]) - (empty - 1)
            moves.append(p)
    except IllegalMove as e:
        return {**out, "agrees": False, "why": f"illegal move in the record: {e}"}
    return out, board, prisoners, tuple(reversed(moves))


def finish(out: dict, own: np.ndarray, names: list[str], score: float,
           max_error: float | None = None) -> dict:
    """The label line: the owner map and whether its count names the
    record's winner (and, with ``max_error``, comes within that many points
    of the record's margin)."""
    winner = "B" if score > 0 else "W" if score < 0 else "0"
    margin = float(out["result"][2:]) * (1 if out["result"][0] == "B" else -1)
    agrees = winner == out["result"][0] and (max_error is None
                                             or abs(score - margin) <= max_error)
    out.update(dead=names, score=score, agrees=agrees,
               owner="".join(_CHAR[int(k)] for k in own))
    if not agrees:
        out["why"] = f"the labelled position scores {score:+g}, the record {out['result']}"
    return out


def black_owns(evaluator, board: Board, history) -> np.ndarray:
    """P(Black owns the point) per point, rows from the top, by an
    ownership network asked at ``board`` (``history``: the moves, most
    recent first)."""
    prob = evaluator.evaluate(root_planes(board, history, 9),
                              np.array([board.to_move], np.int32))[0]
    return prob if board.to_move == BLACK else 1.0 - prob


def net_label(evaluator, path: Path, source: str, max_error: float = NET_MAX_ERROR) -> dict | None:
    """The label of one game by an ownership network (None: not a counted
    game): the stones it gives to the other colour are dead.  It agrees
    when its count comes within ``max_error`` points of the record's."""
    game = replay(path, source)
    if game is None or isinstance(game, dict):
        return game
    out, board, prisoners, history = game
    out["by"] = Path(evaluator.path).name
    black = black_owns(evaluator, board, history)
    n = board.size
    dead, names = [], []
    for p in board.points():
        k = board.color(p)
        col, row = board.coords(p)
        pb = float(black[(n - 1 - row) * n + col])
        if (k == BLACK and pb < 0.5) or (k == WHITE and pb > 0.5):
            dead.append(p)
            names.append(format_vertex((col, row), n))
    own = owner_map(board, dead)
    komi = out["komi"]
    score = (float(own.sum()) - komi if out["rules"] == "chinese"
             else territory_score(board, own, dead, prisoners, komi))
    return finish(out, own, names, score, max_error)


def net_lead(evaluator, path: Path, source: str) -> dict | None:
    """The lead line of one resigned game by an ownership network (None:
    not a resigned game): the sum of P(Black owns) - P(White owns) over the
    last position's points."""
    game = replay(path, source, resigned=True)
    if game is None or isinstance(game, dict):
        return game
    out, board, _, history = game
    out["by"] = Path(evaluator.path).name
    black = black_owns(evaluator, board, history)
    lead = round(float(np.sum(2.0 * black.astype(np.float64) - 1.0)), 2)
    ahead = "B" if lead > out["komi"] else "W" if lead < out["komi"] else "0"
    out.update(lead=lead, agrees=ahead == out["result"][0])
    if not out["agrees"]:
        out["why"] = (f"the network's lead {lead:+g} at komi {out['komi']:g} does not favour "
                      f"the winner of {out['result']}")
    return out


def label_game(gnugo: GtpClient, path: Path, source: str) -> dict | None:
    """The label of one game by GNU Go (None: not a counted game)."""
    game = replay(path, source)
    if game is None or isinstance(game, dict):
        return game
    out, board, _, _ = game
    out["by"] = "gnugo"
    komi, rules, size = out["komi"], out["rules"], board.size
    gnugo.send(f"loadsgf {path}")
    gnugo.send(f"komi {komi:g}")
    answer = gnugo.send("final_status_list dead")
    names = answer.split()
    dead = []
    for name in names:
        v = parse_vertex(name, size)
        p = board.point(*v)
        if board.color(p) == EMPTY:
            return {**out, "agrees": False, "why": f"GNU Go's dead stone {name} is an empty point"}
        dead.append(p)
    own = owner_map(board, dead)
    if rules == "chinese":
        score = float(own.sum()) - komi
    else:
        m = _SCORE.match(gnugo.send("final_score"))
        score = 0.0 if m is None else float(m.group(2)) * (1 if m.group(1) == "B" else -1)
    return finish(out, own, names, score)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.ownership_labels",
                                 description=__doc__.split("\n\n")[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", help="folder of SGF files (searched recursively)")
    ap.add_argument("out", help="JSON-lines file (appended to; existing games are skipped)")
    ap.add_argument("--games", type=int, default=None, help="label at most N games (counted, or with --leads resigned)")
    ap.add_argument("--gnugo", default=DEFAULT_GNUGO, help=f"GNU Go command (default: {DEFAULT_GNUGO})")
    ap.add_argument("--net", default=None, metavar="CKPT",
                    help="label with this ownership network instead of GNU Go")
    ap.add_argument("--leads", action="store_true",
                    help="with --net: the resigned games' expected leads, not owner maps")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per GTP command")
    args = ap.parse_args(argv)
    if args.leads and args.net is None:
        ap.error("--leads needs --net: the network counts the resigned games")
    root = Path(args.data)
    if not root.is_dir():
        print(f"error: {root} is not a folder", file=sys.stderr)
        return 2
    try:
        files = find_sgf_files(root)
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    order = np.random.default_rng(args.seed).permutation(len(files))
    out = Path(args.out)
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            try:
                done.add(json.loads(line)["source"])
            except (ValueError, KeyError):
                print(f"error: {out} line {len(done) + 1} is not a label line", file=sys.stderr)
                return 2
    labelled = len(done)
    agree = 0
    started = time.time()
    command = shlex.split(args.gnugo)
    if args.net is not None:
        from nets.evaluator import OwnershipEvaluator
        try:
            evaluator = OwnershipEvaluator(args.net, device="cpu")
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        gnugo = None
    else:
        gnugo = GtpClient(command, timeout=args.timeout)
    try:
        with out.open("a") as f:
            for i in order:
                if args.games is not None and labelled >= args.games:
                    break
                path = files[i]
                source = path.relative_to(root).as_posix()
                if source in done:
                    continue
                try:
                    label = (label_game(gnugo, path, source) if gnugo is not None
                             else net_lead(evaluator, path, source) if args.leads
                             else net_label(evaluator, path, source))
                except ValueError as e:       # unreadable SGF
                    label = {"source": source, "agrees": False, "why": str(e)}
                except GtpClientError as e:
                    label = {"source": source, "agrees": False, "why": f"GNU Go: {e}"}
                    if not gnugo.alive:
                        gnugo = GtpClient(command, timeout=args.timeout)
                if label is None:
                    continue
                f.write(json.dumps(label) + "\n")
                f.flush()
                labelled += 1
                agree += bool(label.get("agrees"))
                if labelled % 50 == 0:
                    rate = (time.time() - started) / max(1, labelled - len(done))
                    print(f"{labelled} games labelled, {rate:.2f} s a game", file=sys.stderr)
    finally:
        if gnugo is not None:
            gnugo.close()
    print(f"{labelled} games in {out} ({labelled - len(done)} new, "
          f"{agree} of them agree with the record)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
