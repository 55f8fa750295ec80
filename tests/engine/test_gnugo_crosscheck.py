"""Cross-check the board rules against GNU Go over GTP.

Seeded random games are played in both programs at once.  Before every move
a handful of candidate points is judged by both -- random points (occupied
ones included), the simple-ko point, and empty points our board refuses
(suicide, superko) -- and the verdicts must agree.  The full position
(``list_stones``) and the capture counts are compared every few moves and
at the end, where the Tromp-Taylor area count is also checked against a
flood fill of GNU Go's stones.

Two rule sets are checked:

* ``psk``: GNU Go run with ``--positional-superko``, against the full rules
  of :class:`engine.board.Board` (``Board.legality``, ``Board.play``);
* ``simple``: GNU Go with its default simple-ko rule, against the kernels
  alone (``is_legal``, ``play``), which know only simple ko.

GNU Go keeps at most 500 moves of history for its superko check, so games
stay well below that.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from collections import Counter

import pytest

from engine import board as kb
from engine.board import BLACK, EMPTY, PASS, WHITE, Board

LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"


def find_gnugo() -> str | None:
    path = shutil.which("gnugo")
    if path:
        return path
    if os.access("/usr/games/gnugo", os.X_OK):
        return "/usr/games/gnugo"
    return None


GNUGO = find_gnugo()

pytestmark = [
    pytest.mark.gnugo,
    pytest.mark.skipif(GNUGO is None, reason="GNU Go not found (PATH, /usr/games)"),
]


# --------------------------------------------------------------------------
# GTP plumbing

try:
    from gtp.client import GtpClient, GtpClientError
except ImportError:  # the project's client is not there: a minimal one
    class GtpClientError(Exception):
        pass

    class GtpClient:
        def __init__(self, argv, timeout=30.0):
            self._proc = subprocess.Popen(
                list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True, bufsize=1)

        def send(self, command):
            self._proc.stdin.write(command + "\n")
            self._proc.stdin.flush()
            lines = []
            while True:
                line = self._proc.stdout.readline()
                if not line:
                    raise GtpClientError(f"engine died on {command!r}")
                line = line.rstrip("\r\n")
                if not line.strip():
                    if lines:
                        break
                    continue
                lines.append(line)
            head = lines[0]
            text = "\n".join([head[1:].strip(), *lines[1:]]).strip()
            if head.startswith("?"):
                raise GtpClientError(text)
            return text

        def close(self):
            try:
                self.send("quit")
            except (GtpClientError, OSError):
                pass
            self._proc.wait(timeout=5)


def gtp_vertex(board: Board, p: int) -> str:
    if p == PASS:
        return "pass"
    col, row = board.coords(p)
    return f"{LETTERS[col]}{row + 1}"


def gtp_point(board: Board, v: str) -> int:
    col = LETTERS.index(v[0].upper())
    return board.point(col, int(v[1:]) - 1)


GTP_COLOR = {BLACK: "black", WHITE: "white"}


@pytest.fixture(scope="module")
def engines():
    started = {}

    def get(mode):
        if mode not in started:
            argv = [GNUGO, "--mode", "gtp", "--chinese-rules", "--quiet",
                    "--level", "0"]
            if mode == "psk":
                argv.append("--positional-superko")
            started[mode] = GtpClient(argv, timeout=30.0)
        return started[mode]

    yield get
    for client in started.values():
        client.close()


# --------------------------------------------------------------------------
# the two rule sets


class FullRules:
    """Board with positional superko (GNU Go --positional-superko)."""

    mode = "psk"

    def __init__(self, size):
        self.board = Board(size)

    def legal(self, p, c):
        return self.board.legality(p, c) is None

    def play(self, p, c):
        return self.board.play(p, c)


class SimpleKoRules:
    """The bare kernels: simple ko only (GNU Go's default)."""

    mode = "simple"

    def __init__(self, size):
        self.board = Board(size)

    def legal(self, p, c):
        if p == PASS:
            return True
        return bool(kb.is_legal(self.board.b, self.board.s, p, c))

    def play(self, p, c):
        b = self.board
        n = kb.play(b.b, b.s, kb.ZOBRIST, p, c)
        b.history.append(b.hash)
        return n


# --------------------------------------------------------------------------
# comparison helpers


def gnugo_stones(gnugo, board: Board) -> str:
    """GNU Go's position as an ASCII diagram in our ``str(board)`` format."""
    n = board.size
    rows = [["."] * n for _ in range(n)]
    for color, ch in ((BLACK, "X"), (WHITE, "O")):
        for v in gnugo.send(f"list_stones {GTP_COLOR[color]}").split():
            col, row = board.coords(gtp_point(board, v))
            rows[n - 1 - row][col] = ch
    return "\n".join(" ".join(r) for r in rows)


def tromp_taylor(diagram: str) -> tuple[int, int]:
    """Area count of an ASCII diagram, by a plain flood fill."""
    grid = [line.split() for line in diagram.splitlines()]
    n = len(grid)
    black = sum(r.count("X") for r in grid)
    white = sum(r.count("O") for r in grid)
    seen = set()
    for r0 in range(n):
        for c0 in range(n):
            if grid[r0][c0] != "." or (r0, c0) in seen:
                continue
            region, reach, todo = {(r0, c0)}, set(), [(r0, c0)]
            while todo:
                r, c = todo.pop()
                for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                    if 0 <= rr < n and 0 <= cc < n:
                        k = grid[rr][cc]
                        if k == ".":
                            if (rr, cc) not in region:
                                region.add((rr, cc))
                                todo.append((rr, cc))
                        else:
                            reach.add(k)
            seen |= region
            if reach == {"X"}:
                black += len(region)
            elif reach == {"O"}:
                white += len(region)
    return black, white


def compare_position(gnugo, rules, where):
    board = rules.board
    theirs = gnugo_stones(gnugo, board)
    assert str(board) == theirs, f"{where}: position differs\nours:\n{board}\ngnugo:\n{theirs}"
    caps = (int(gnugo.send("captures black")), int(gnugo.send("captures white")))
    assert board.captures == caps, f"{where}: captures ours {board.captures} gnugo {caps}"


def is_eye(board: Board, p: int, c: int) -> bool:
    w = board.width
    return all(board.b[kb.COLOR, p + d] in (c, kb.WALL) for d in (-w, -1, 1, w))


def judge(gnugo, rules, p, c, stats, where):
    """Both programs judge c at p; they must agree."""
    board = rules.board
    ours = rules.legal(p, c)
    theirs = gnugo.send(f"is_legal {GTP_COLOR[c]} {gtp_vertex(board, p)}")
    assert theirs in ("0", "1")
    stats["judged"] += 1
    stats["legal" if ours else "illegal"] += 1
    reason = board.legality(p, c)   # full rules, for the tally
    if ours != (theirs == "1"):
        stats["disagreements"] += 1
        pytest.fail(f"{where}: {GTP_COLOR[c]} {gtp_vertex(board, p)} ours "
                    f"legal={ours} ({reason}), gnugo {theirs}\n{board}")
    if not ours:
        stats[f"illegal:{reason}"] += 1
    elif reason is not None:       # simple-ko rules: superko allowed
        stats[f"legal but {reason}"] += 1


def play_game(gnugo, rules, seed, max_moves, check_every, stats):
    """One seeded random game in both programs.  Updates ``stats``."""
    rng = random.Random(seed)
    board = rules.board
    size = board.size
    points = list(board.points())
    gnugo.send(f"boardsize {size}")
    gnugo.send("clear_board")
    gnugo.send("komi 0")
    passes = 0
    for move_no in range(max_moves):
        c = board.to_move
        # -- candidates: random points, the ko point, refused empty points
        cands = set(rng.sample(points, min(len(points), 4)))
        if board.ko != PASS:
            cands.add(board.ko)
        refused = [p for p in points if board.color(p) == EMPTY
                     and not rules.legal(p, c)]
        cands.update(rng.sample(refused, min(len(refused), 3)))
        occupied = [p for p in points if board.color(p) != EMPTY]
        if occupied:
            cands.add(rng.choice(occupied))
        for p in sorted(cands):
            for cc in (c, 3 - c):   # the side to move, and the other side
                judge(gnugo, rules, p, cc, stats, f"seed {seed} move {move_no}")
        # -- choose a move: a random legal point that fills no own eye
        rng.shuffle(points)
        move = PASS
        for p in points:
            if board.color(p) == EMPTY and rules.legal(p, c) and (
                    not is_eye(board, p, c) or rng.random() < 0.05):
                move = p
                break
        rules.play(move, c)
        gnugo.send(f"play {GTP_COLOR[c]} {gtp_vertex(board, move)}")
        stats["moves"] += 1
        passes = passes + 1 if move == PASS else 0
        if move_no % check_every == 0:
            compare_position(gnugo, rules, f"seed {seed} move {move_no}")
            stats["position checks"] += 1
        if passes >= 2:
            break
    compare_position(gnugo, rules, f"seed {seed} end")
    stats["position checks"] += 1
    # Tromp-Taylor area of GNU Go's final stones, counted here
    assert board.area() == tromp_taylor(gnugo_stones(gnugo, board))
    stats["games"] += 1


# (rules, size, games, max moves per game, compare position every N moves)
CONFIGS = [
    (FullRules, 5, 80, 200, 1),
    (FullRules, 9, 12, 300, 5),
    (FullRules, 19, 3, 400, 20),
    (SimpleKoRules, 5, 40, 200, 1),
    (SimpleKoRules, 9, 6, 300, 5),
    (SimpleKoRules, 19, 1, 400, 20),
]

TOTALS: Counter = Counter()


@pytest.mark.parametrize(
    "rules,size,games,max_moves,check_every", CONFIGS,
    ids=[f"{r.mode}-{s}x{s}" for r, s, *_ in CONFIGS])
def test_random_games_agree_with_gnugo(engines, rules, size, games, max_moves,
                                       check_every):
    stats = Counter()
    for g in range(games):
        r = rules(size)
        play_game(engines(r.mode), r, seed=10_000 * size + 100 * (r.mode == "psk") + g,
                  max_moves=max_moves, check_every=check_every, stats=stats)
    TOTALS.update(stats)
    assert stats["disagreements"] == 0
    assert stats["games"] == games
    assert stats["judged"] >= 8 * stats["moves"]
    assert stats["illegal"] > 0 and stats["legal"] > 0
    assert stats["illegal:suicide"] > 0 and stats["illegal:ko"] > 0
    if size == 5:   # repetitions beyond simple ko were met and judged
        if rules is FullRules:
            assert stats["illegal:superko"] > 0
        else:
            assert stats["legal but superko"] > 0
    print(f"\n{rules.mode} {size}x{size}: {dict(stats)}")


KNOWN_CASES = {
    # sending two, returning one: Black B1 would recreate the start
    "send-two-return-one": ("""
        . . . . .
        . . . . .
        . . . . .
        O O X . .
        . X . X .
    """, [(BLACK, "A1"), (WHITE, "C1")], (BLACK, "B1"), "superko"),
    # triple ko: the sixth capture (White D8) would recreate the start
    "triple-ko": ("""
        . . . X O . . . .
        . . X O . O . . .
        . . . X O . . . .
        . . . X O . . . .
        . . X . X O . . .
        . . . X O . . . .
        . . . X O . . . .
        . . X O . O . . .
        . . . X O . . . .
    """, [(BLACK, "E2"), (WHITE, "D5"), (BLACK, "E8"), (WHITE, "D2"),
          (BLACK, "E5")], (WHITE, "D8"), "superko"),
    # simple ko: the immediate retake
    "ko": ("""
        . . . . .
        . X O . .
        X O . O .
        . X O . .
        . . . . .
    """, [(BLACK, "C3")], (WHITE, "B3"), "ko"),
    # group suicide
    "suicide": ("""
        . . . . .
        . . . . .
        O O . . .
        X X O . .
        . X O . .
    """, [], (BLACK, "A1"), "suicide"),
}


@pytest.mark.parametrize("case", sorted(KNOWN_CASES))
def test_gnugo_judges_the_hand_made_cases_alike(engines, case):
    """The hand-made cases of test_board.py, judged by GNU Go as well, under
    both rule sets.  Setup stones are played as moves in GNU Go, so the start
    position is part of its game history as it is of ours."""
    text, moves, (qc, qv), reason = KNOWN_CASES[case]
    board = Board.from_ascii(text)
    stones = [(board.color(p), gtp_vertex(board, p)) for p in board.points()
              if board.color(p) != EMPTY]
    for mode in ("psk", "simple"):
        gnugo = engines(mode)
        gnugo.send(f"boardsize {board.size}")
        gnugo.send("clear_board")
        for c, v in stones:
            gnugo.send(f"play {GTP_COLOR[c]} {v}")
    for c, v in moves:
        board.play(gtp_point(board, v), c)
        for mode in ("psk", "simple"):
            engines(mode).send(f"play {GTP_COLOR[c]} {v}")
    p = gtp_point(board, qv)
    assert board.legality(p, qc) == reason
    simple_legal = bool(kb.is_legal(board.b, board.s, p, qc))
    assert simple_legal == (reason == "superko")
    assert engines("psk").send(f"is_legal {GTP_COLOR[qc]} {qv}") == "0"
    assert engines("simple").send(f"is_legal {GTP_COLOR[qc]} {qv}") == \
        ("1" if simple_legal else "0")
    for mode in ("psk", "simple"):
        assert gnugo_stones(engines(mode), board) == str(board)
