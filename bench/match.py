"""Play a match between two GTP engines and report the result.

    python -m bench.match --games N [--size 9] [--komi 7.5] [--handicap H]
        [--engine-color alternate|black|white]
        [--engine "python -m engine.gtp --rollouts 10000 --quiet"]
        [--opponent "/usr/games/gnugo --mode gtp --level 10 --chinese-rules"]
        [--sgf-dir DIR] [--parallel K] [--max-moves M] [--timeout SEC]
        [--startup-timeout SEC] [--clock SPEC] [--engine-setup CMD]...
        [--opponent-setup CMD]... [--json FILE] [--resume]

Game ``i`` (0-based) gives the engine under test Black when ``i`` is even,
White when odd (``--engine-color black`` or ``white`` fixes its colour: a
handicap match).  ``--handicap H`` (2 or more) gives Black H stones at
GTP's fixed places: both programs get ``fixed_handicap H`` after ``komi``;
one that places them elsewhere (Pachi's third stone) is cleared and given
GTP's places with ``set_free_handicap`` (noted in the record), one that
refuses both forfeits.  White moves first; the SGF record has the stones
(AB, HA).  Both programs are started afresh for every game (a crash
or hang cannot leak into the next game) and get ``boardsize``,
``clear_board`` and ``komi``, then the ``--engine-setup`` /
``--opponent-setup`` commands (repeatable: rules, threads or time per move
of programs that take them as GTP commands, such as Fuego's ``go_rules
chinese``; a refused one forfeits the game like any refused command); then
``genmove`` goes to the side to move and its answer is passed to the other
side with ``play`` (``pass`` as ``pass``).  A leading ``python`` in either
command line means this interpreter (``sys.executable``).

How a game ends:

* a ``resign`` answer: the other side wins (``W+R`` / ``B+R``);
* two passes in a row, or ``--max-moves`` moves (passes included): the
  position is scored, see below;
* misbehaviour: the side that crashed (exited, or could not be started),
  hung (no answer to one command within ``--timeout`` seconds;
  ``--startup-timeout`` for the first command, which waits for start-up;
  a pause of the whole match with ``kill -STOP`` does not count),
  answered something that is not a vertex, ``pass`` or ``resign``, played
  an illegal move (occupied point, suicide, ko, positional superko), or
  refused with ``?`` a command the rules allow (``boardsize``, ``komi``, a
  legal ``play``, ...) loses the game (``B+F`` / ``W+F``).  The reason is
  recorded and the match goes on with the next game.

Scoring rule (Chinese / area rules).  Both programs are asked for
``final_status_list dead``.  When both answer and their lists differ, the
referee takes neither side's word: as KGS has its players do, the game goes
on (each program gets ``kgs-genmove_cleanup`` where it knows the command,
``genmove`` otherwise, for at most ``--max-moves`` more moves) until two
passes in a row, and the lists are asked again; if they still differ, no
stone counts as dead (whoever thought a stone dead had the chance to
capture it).  The record's ``play_out`` keeps the two lists that started
it and the moves it took, and the summary says how many games needed one.  The result is our own Tromp-Taylor area count
(stones plus empty regions reached by one colour only, minus komi) of the
final position after removing the stones that the *referee* lists as dead.
The referee is GNU Go whenever one of the two programs is GNU Go (it answers
``name`` with "GNU Go"; it is a strong judge of life and death), otherwise
the engine under test.  If the referee gives no usable list, the other
program's is used, and failing that none (plain Tromp-Taylor).  When the
referee is GNU Go its own ``final_score`` is recorded beside ours as a
cross-check (``referee_final_score``, ``score_agrees``).  Each record says
which list was used (``dead_from``).  Failures while scoring never forfeit
a game; they are listed in the record's ``notes``.

Every game is written as SGF to ``--sgf-dir`` (default
``runs/match-<timestamp>/``) with PB/PW/RE/KM and a comment saying why the
game ended; whatever the programs print on stderr goes to a log file beside
it (kept only when not empty).  Progress goes to stderr, one line a game;
the summary goes to stdout: games, wins, losses, draws, the win rate of the
engine under test with a 95% Wilson interval (draws count half), wins as
Black and as White, average game length, each side's seconds per move
(every ``genmove`` from the command sent to the answer read, wall time,
clock or not: what "equal time per move" is checked against; a pause of
the whole match with ``kill -STOP`` is left out of it and of the clocks), how games
ended, and the errors.
``--json`` also writes the summary and every game's record.  Each game's record is
also kept beside its SGF (``game-NNN.json``), and the settings in
``match.json``: ``--resume`` continues a match stopped part way (a session
that ended, a machine restarted) with the games not yet played, and
refuses when the settings differ; a new match never writes into a folder
that holds another.  A game in play keeps its moves, both sides' thinking
time and clocks in ``game-NNN.partial.json``, rewritten after every move;
``--resume`` goes on from there: both programs start afresh and get the
moves played so far with ``play`` (what they kept between moves, such as a
search tree, is lost), and the record says after which move
(``resumed_after``).  SIGTERM or Ctrl-C stops a match at once (exit status
130): the programs are killed and the games in play are not recorded, so
nobody forfeits for being stopped.

Clocks (``--clock``, KGS's forms): ``absolute MAIN``, ``byoyomi MAIN PERIOD
PERIODS`` (Japanese: a move within a period costs none of it, each period
overrun uses one up) or ``canadian MAIN PERIOD STONES`` (after main time,
STONES moves in every PERIOD seconds), in seconds.  Both programs get
``kgs-time_settings`` (``time_settings`` when they do not know it: MAIN
PERIOD 1 for byo-yomi, MAIN PERIOD STONES for Canadian, MAIN 0 0 for
absolute) and, before every ``genmove``, ``time_left COLOUR SECONDS
STONES`` (0 stones in main time; in byo-yomi the period's seconds and 1,
in Canadian the period's seconds and stones left), seconds rounded down.
The referee measures every ``genmove`` from the command sent to the answer
read, wall time, and a program whose clock runs out loses on time (``B+T``
/ ``W+T``, end "time").  Each record keeps both clocks at the end and the
longest move (``clocks``).

``--parallel K`` plays K games at once: each game is driven by its own
thread in this process and runs its two programs as separate processes, so
K games use 2K engine processes; mind the CPU count when timing matters.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from sgfmill import sgf as sgfmill

from bench.stats import wilson
from engine.board import BLACK, PASS, WHITE, Board
from engine.game import fixed_handicap_points, max_fixed_handicap
from engine.sgf import dumps
from gtp.client import GtpClient, GtpClientError
from gtp.protocol import GtpError
from gtp.vertex import format_vertex, parse_vertex

ROLES = ("engine", "opponent")
LETTER = {BLACK: "B", WHITE: "W"}
GTP_COLOR = {BLACK: "b", WHITE: "w"}
DEFAULT_ENGINE = "python -m engine.gtp --rollouts 10000 --quiet"
DEFAULT_OPPONENT = "/usr/games/gnugo --mode gtp --level 10 --chinese-rules"


class Forfeit(Exception):
    """A program misbehaved: it loses the game."""

    def __init__(self, role: str, kind: str, message: str):
        super().__init__(f"{role} {kind}: {message}")
        self.role = role
        self.kind = kind          # crash, timeout, garbage, illegal, refused
        self.message = message


CLOCK_FIELDS = {"absolute": 1, "byoyomi": 3, "canadian": 3}


@dataclass(frozen=True)
class ClockSpec:
    """A clock in KGS's terms (see the module documentation)."""
    kind: str           # absolute, byoyomi, canadian
    main: int           # seconds
    period: int = 0     # seconds of a byo-yomi period
    count: int = 0      # periods (byoyomi) or stones per period (canadian)

    @classmethod
    def parse(cls, text: str) -> "ClockSpec":
        words = text.split()
        if not words or words[0] not in CLOCK_FIELDS or len(words) != 1 + CLOCK_FIELDS[words[0]]:
            raise ValueError(f"expected 'absolute MAIN', 'byoyomi MAIN PERIOD PERIODS' or "
                             f"'canadian MAIN PERIOD STONES', got {text!r}")
        try:
            numbers = [int(w) for w in words[1:]]
        except ValueError:
            raise ValueError(f"clock values must be whole seconds and counts: {text!r}") from None
        if any(x < 0 for x in numbers) or (words[0] != "absolute" and
                                           (numbers[1] < 1 or numbers[2] < 1)):
            raise ValueError(f"clock values must be positive: {text!r}")
        return cls(words[0], *numbers)

    def kgs(self) -> str:
        return " ".join(str(x) for x in (f"kgs-time_settings {self.kind}", self.main,
                                          *((self.period, self.count)
                                            if self.kind != "absolute" else ())))

    def gtp(self) -> str:
        if self.kind == "absolute":
            return f"time_settings {self.main} 0 0"
        stones = 1 if self.kind == "byoyomi" else self.count
        return f"time_settings {self.main} {self.period} {stones}"


class GameClock:
    """One side's clock in one game."""

    def __init__(self, spec: ClockSpec):
        self.spec = spec
        self.main = float(spec.main)
        self.in_byoyomi = False
        self.periods = spec.count if spec.kind == "byoyomi" else 0
        self.period_left = float(spec.period)
        self.stones = spec.count if spec.kind == "canadian" else 0
        self.longest = 0.0
        self.used = 0.0

    def time_left(self) -> tuple[int, int]:
        """(seconds, stones) for GTP's time_left."""
        if not self.in_byoyomi:
            return int(self.main), 0
        if self.spec.kind == "byoyomi":
            return self.spec.period, 1
        return int(max(self.period_left, 0.0)), self.stones

    def spend(self, t: float) -> bool:
        """Charge one move of ``t`` seconds; False when the flag fell."""
        self.longest = max(self.longest, t)
        self.used += t
        if not self.in_byoyomi:
            if t <= self.main:
                self.main -= t
                return True
            t -= self.main
            self.main = 0.0
            if self.spec.kind == "absolute":
                return False
            self.in_byoyomi = True
        if self.spec.kind == "byoyomi":
            overruns = int(t // self.spec.period)
            if overruns >= self.periods:
                self.periods = 0
                return False
            self.periods -= overruns
            return True
        self.period_left -= t                   # Canadian: this move is one of the period's
        if self.period_left < 0:
            return False
        self.stones -= 1
        if self.stones == 0:
            self.stones, self.period_left = self.spec.count, float(self.spec.period)
        return True

    def report(self) -> dict:
        out = {"main_left": round(self.main, 2), "in_byoyomi": self.in_byoyomi,
               "longest_move": round(self.longest, 2), "used": round(self.used, 1)}
        if self.spec.kind == "byoyomi":
            out["periods_left"] = self.periods
        elif self.spec.kind == "canadian":
            out["period_left"] = round(self.period_left, 2)
            out["stones_left"] = self.stones
        return out


@dataclass
class MatchConfig:
    engine: list[str]
    opponent: list[str]
    size: int = 9
    komi: float = 7.5
    max_moves: int = 243
    timeout: float = 120.0
    startup_timeout: float = 300.0
    sgf_dir: Path = Path("runs")
    games: int = 1
    clock: ClockSpec | None = None
    setup: dict[str, list[str]] | None = None   # role -> GTP commands after komi
    handicap: int = 0                           # fixed handicap stones (0: an even game)
    engine_color: str = "alternate"             # or "black", "white": the engine's colour
    resumable: bool = False                     # keep game-NNN.partial.json while playing


def split_command(text: str) -> list[str]:
    argv = shlex.split(text)
    if not argv:
        raise ValueError("empty command")
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return argv


def _classify(e: GtpClientError) -> str:
    if e.failed:
        return "refused"
    msg = e.message
    if msg.startswith("timeout"):
        return "timeout"
    if "exited" in msg or "closed" in msg:
        return "crash"
    return "garbage"


# The programs of the games in play, so that a stopped match can end them
# (``stop_match``); and the flag that says the match is being stopped, so
# that the game it cuts short is not recorded as a forfeit.
LIVE: set["Side"] = set()
LIVE_LOCK = threading.Lock()
STOPPING = threading.Event()


class Side:
    """One side of one game: a GtpClient whose failures become Forfeits."""

    def __init__(self, role: str, argv: list[str], timeout: float, log_path: Path,
                 append: bool = False):
        self.role = role
        self.argv = argv
        self.timeout = timeout
        self.name = Path(argv[0]).name
        self.log_path = log_path
        self.log = open(log_path, "a" if append else "w")
        self.client: GtpClient | None = None
        try:
            self.client = GtpClient(argv, timeout, stderr=self.log)
        except OSError as e:
            self.close()
            raise Forfeit(role, "crash", f"cannot start {shlex.join(argv)}: {e}") from None
        with LIVE_LOCK:
            LIVE.add(self)

    def send(self, command: str, timeout: float | None = None) -> str:
        assert self.client is not None
        try:
            return self.client.send(command, timeout)
        except GtpClientError as e:
            msg = e.message if repr(command) in e.message else f"{command!r}: {e.message}"
            raise Forfeit(self.role, _classify(e), msg) from None

    @property
    def paused(self) -> float:
        """Seconds of the last answer's wait that the match spent stopped."""
        assert self.client is not None
        return self.client.paused

    def try_send(self, command: str, notes: list[str],
                 timeout: float | None = None) -> str | None:
        """send, but a failure is only noted (scoring and cosmetics)."""
        if self.client is None or not self.client.alive:
            notes.append(f"{self.role}: {command!r} not sent, the program is gone")
            return None
        try:
            return self.client.send(command, timeout)
        except GtpClientError as e:
            notes.append(f"{self.role}: {command!r} failed: {e.message}")
            return None

    def close(self) -> None:
        with LIVE_LOCK:
            LIVE.discard(self)
        if self.client is not None:
            self.client.close()
        self.log.close()
        try:
            if self.log_path.stat().st_size == 0:
                self.log_path.unlink()
        except OSError:
            pass


def place_handicap(p: Side, handicap: int, stones: list[int], board: Board, komi: float,
                   notes: list[str]) -> None:
    """``fixed_handicap`` to one program; where it places the stones
    elsewhere than GTP's fixed places (Pachi puts its third stone at Q4, not
    D16: the same shape in another corner), its board is cleared and the
    stones go to GTP's places with ``set_free_handicap``, noted in the
    record.  A program that refuses both, or that answers neither with
    vertices, forfeits."""
    answer = p.send(f"fixed_handicap {handicap}")
    try:
        placed = {board.point(*v) for v in (parse_vertex(t, board.size) for t in answer.split())
                  if v is not None}
    except GtpError:
        raise Forfeit(p.role, "garbage", f"fixed_handicap {handicap}: not vertices: "
                      f"{answer.strip()!r}") from None
    if placed == set(stones):
        return
    wanted = " ".join(board.name(q) for q in stones)
    p.send("clear_board")
    p.send(f"komi {komi:g}")
    if p.try_send(f"set_free_handicap {wanted}", notes) is None:
        raise Forfeit(p.role, "garbage", f"fixed_handicap {handicap} placed the stones at "
                      f"{answer.strip()}, not GTP's fixed places ({wanted}), and "
                      f"set_free_handicap {wanted} failed")
    notes.append(f"{p.role}: fixed_handicap {handicap} placed the stones at {answer.strip()}, "
                 f"not GTP's fixed places; set_free_handicap {wanted} instead")


def parse_genmove(answer: str, size: int) -> tuple | str | None:
    """'resign', None for a pass, or (col, row); ValueError otherwise."""
    token = answer.strip()
    if token.lower() == "resign":
        return "resign"
    if len(token.split()) != 1:
        raise ValueError(f"not a move: {answer!r}")
    try:
        return parse_vertex(token, size)
    except GtpError:
        raise ValueError(f"not a move: {answer!r}") from None


def area_count(board: Board, dead: set[tuple[int, int]]) -> tuple[int, int]:
    """Tromp-Taylor area (black, white) of the board with the ``dead``
    stones taken off: stones count for their colour, an empty region for
    the colour that alone reaches it."""
    n = board.size
    grid = {}
    for col in range(n):
        for row in range(n):
            k = board.color(board.point(col, row))
            grid[(col, row)] = 0 if (col, row) in dead else k
    area = {BLACK: 0, WHITE: 0}
    seen = set()
    for v, k in grid.items():
        if k in (BLACK, WHITE):
            area[k] += 1
        elif v not in seen:
            region, reach, stack = 0, set(), [v]
            seen.add(v)
            while stack:
                c, r = stack.pop()
                region += 1
                for q in ((c - 1, r), (c + 1, r), (c, r - 1), (c, r + 1)):
                    kq = grid.get(q)
                    if kq is None:
                        continue
                    if kq == 0:
                        if q not in seen:
                            seen.add(q)
                            stack.append(q)
                    else:
                        reach.add(kq)
            if len(reach) == 1:
                area[reach.pop()] += region
    return area[BLACK], area[WHITE]


def parse_vertex_list(text: str | None, board: Board, notes: list[str], role: str):
    """Stones named in a final_status_list answer; None if unusable."""
    if text is None:
        return None
    out = set()
    for tok in text.split():
        try:
            v = parse_vertex(tok, board.size)
        except GtpError:
            notes.append(f"{role}: final_status_list dead: bad vertex {tok!r}, list ignored")
            return None
        if v is None or board.color(board.point(*v)) not in (BLACK, WHITE):
            notes.append(f"{role}: final_status_list dead names {tok}, not a stone; skipped")
            continue
        out.add(v)
    return out


def format_result(score: float) -> str:
    if score > 0:
        return f"B+{score:g}"
    if score < 0:
        return f"W+{-score:g}"
    return "0"


def parse_score(text: str | None) -> float | None:
    """'B+3.5' -> 3.5, 'W+2' -> -2, '0' -> 0; None if not a score."""
    if text is None:
        return None
    t = text.strip().upper()
    try:
        if t in ("0", "DRAW", "JIGO"):
            return 0.0
        if t.startswith("B+"):
            return float(t[2:])
        if t.startswith("W+"):
            return -float(t[2:])
    except ValueError:
        pass
    return None


def is_gnugo(name: str | None) -> bool:
    return name is not None and "gnu go" in name.lower()


class MatchStopped(Exception):
    """The match was stopped (``stop_match``) while this game was in play."""


def stop_match() -> None:
    """Stop the games in play at once (SIGTERM or Ctrl-C): their programs
    are killed and the games are not recorded (with ``resumable`` their
    ``game-NNN.partial.json`` stays, and ``--resume`` goes on from it)."""
    STOPPING.set()
    with LIVE_LOCK:
        sides = list(LIVE)
    for side in sides:
        if side.client is not None and side.client.alive:
            try:
                os.kill(side.client.pid, signal.SIGKILL)
            except OSError:
                pass


def partial_path(cfg: MatchConfig, index: int) -> Path:
    return cfg.sgf_dir / f"game-{index + 1:03d}.partial.json"


def save_partial(path: Path, size: int, moves, thinking: dict, clocks: dict,
                 seconds: float, resumed: list[int]) -> None:
    """The state of a game in play, rewritten after every move (atomically:
    a match killed while writing leaves the previous state)."""
    state = {"moves": [f"{LETTER[c]} {format_vertex(v, size)}" for c, v in moves],
             "thinking": thinking, "seconds": round(seconds, 2), "resumed_at": resumed,
             "clocks": {role: {k: v for k, v in vars(clock).items() if k != "spec"}
                        for role, clock in clocks.items()}}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(state))
    os.replace(tmp, path)


def load_partial(path: Path, cfg: MatchConfig, notes: list[str]) -> dict | None:
    """The saved state of a game cut short, its moves as (colour, vertex)
    checked for legality from the game's start; None when there is none,
    or when it cannot be used (noted in the record: the game starts over)."""
    if not path.exists():
        return None
    try:
        state = json.loads(path.read_text())
        board, _, first = start_board(cfg)
        moves = []
        for i, text in enumerate(state["moves"]):
            letter, vertex = text.split()
            c = {"B": BLACK, "W": WHITE}[letter]
            if c != (first if i % 2 == 0 else 3 - first):
                raise ValueError(f"move {i + 1} ({text}) is out of turn")
            v = parse_vertex(vertex, cfg.size)
            p = PASS if v is None else board.point(*v)
            why = board.legality(p, c)
            if why is not None:
                raise ValueError(f"move {i + 1} ({text}) is illegal: {why}")
            board.play(p, c)
            moves.append((c, v))
        state["moves"] = moves
        state["thinking"] = {r: [float(state["thinking"][r][0]), int(state["thinking"][r][1])]
                             for r in ROLES}
        state["seconds"] = float(state["seconds"])
        state["resumed_at"] = [int(k) for k in state["resumed_at"]]
        if set(state["clocks"]) != (set(ROLES) if cfg.clock is not None else set()):
            raise ValueError("its clocks do not match --clock")
    except (OSError, ValueError, KeyError, TypeError, IndexError, GtpError) as e:
        notes.append(f"{path.name} could not be used ({e}); the game started over")
        return None
    return state


def start_board(cfg: MatchConfig) -> tuple[Board, list[int], int]:
    """The board before the first move (with the handicap stones), the
    stones' points and the colour that moves first."""
    board = Board(cfg.size)
    stones = [board.point(*v) for v in fixed_handicap_points(cfg.size, cfg.handicap)] \
        if cfg.handicap else []
    for p in stones:
        board.place(p, BLACK)
    first = WHITE if stones else BLACK
    board.to_move = first
    return board, stones, first


def play_game(index: int, cfg: MatchConfig) -> dict:
    """Play game ``index``; never raises for a program's misbehaviour.

    With ``cfg.resumable`` the game's state is kept in
    ``game-NNN.partial.json`` after every move until it ends; a game that
    finds one there goes on from it: both programs start afresh, get the
    moves played so far with ``play`` (their search trees are lost), and
    the record notes the move it went on from.  Raises MatchStopped when
    ``stop_match`` cut it short."""
    started = time.perf_counter()
    engine_color = {"black": BLACK, "white": WHITE}.get(
        cfg.engine_color, BLACK if index % 2 == 0 else WHITE)
    color_of = {"engine": engine_color, "opponent": WHITE if engine_color == BLACK else BLACK}
    argv_of = {"engine": cfg.engine, "opponent": cfg.opponent}
    size, komi = cfg.size, cfg.komi
    rec: dict = {"game": index + 1, "engine_color": LETTER[engine_color],
                 "size": size, "komi": komi, "handicap": cfg.handicap}
    players: dict[str, Side] = {}
    names = {r: Path(argv_of[r][0]).name for r in ROLES}
    gtp_names: dict[str, str | None] = {r: None for r in ROLES}
    board, stones, first = start_board(cfg)
    moves: list[tuple[int, tuple[int, int] | None]] = []
    notes: list[str] = []
    partial = partial_path(cfg, index)
    saved = load_partial(partial, cfg, notes) if cfg.resumable else None
    before = saved["seconds"] if saved else 0.0      # play time of the earlier sittings
    resumed: list[int] = saved["resumed_at"] if saved else []
    error = None
    end = reason = None
    winner: int | None = None
    score = None
    tag = f"game-{index + 1:03d}"
    clocks: dict[str, GameClock] = {}
    thinking = saved["thinking"] if saved else {role: [0.0, 0] for role in ROLES}
    try:
        for role in ROLES:
            players[role] = Side(role, argv_of[role], cfg.timeout,
                                 cfg.sgf_dir / f"{tag}-{role}.log", append=saved is not None)
        for role in ROLES:
            p = players[role]
            got = p.send("name", timeout=cfg.startup_timeout)
            gtp_names[role] = got.strip()
            version = p.try_send("version", notes)
            names[role] = f"{got.strip()} {version.strip()}".strip() if version else got.strip()
            names[role] = names[role] or Path(argv_of[role][0]).name
            p.send(f"boardsize {size}")
            p.send("clear_board")
            p.send(f"komi {komi:g}")
            if stones:
                place_handicap(p, cfg.handicap, stones, board, komi, notes)
            for command in (cfg.setup or {}).get(role, []):
                p.send(command)
            if cfg.clock is not None:
                kgs = p.send("known_command kgs-time_settings").strip() == "true"
                p.send(cfg.clock.kgs() if kgs else cfg.clock.gtp())
                clocks[role] = GameClock(cfg.clock)
                if saved:
                    for name, value in saved["clocks"][role].items():
                        setattr(clocks[role], name, value)
        if saved:
            for c, move in saved["moves"]:
                board.play(PASS if move is None else board.point(*move), c)
                moves.append((c, move))
                for role in ROLES:
                    players[role].send(f"play {GTP_COLOR[c]} {format_vertex(move, size)}")
            resumed.append(len(moves))
            notes.append(f"resumed after move {len(moves)}: both programs started afresh "
                         f"and were given the moves played so far")

        def play_moves(genmove: dict[str, str], limit: int,
                       keep: bool = False) -> tuple[str, str, int | None]:
            """Moves until two passes in a row, a resignation, a lost clock
            or ``limit`` moves in all: (end, reason, winner or None).  With
            ``keep`` (the game proper, not a play-out) the passes that end
            the moves so far count, and the state is saved after each move
            of a resumable game."""
            passes = 0
            while keep and passes < min(2, len(moves)) and moves[-1 - passes][1] is None:
                passes += 1
            while True:
                if passes >= 2:
                    return "two passes", "both players passed", None
                if len(moves) >= limit:
                    return "max moves", f"{limit} moves played (--max-moves)", None
                c = first if len(moves) % 2 == 0 else 3 - first
                mover = "engine" if c == engine_color else "opponent"
                other = "opponent" if mover == "engine" else "engine"
                clock = clocks.get(mover)
                if clock is not None:
                    seconds, stones = clock.time_left()
                    players[mover].send(f"time_left {GTP_COLOR[c]} {seconds} {stones}")
                asked = time.perf_counter()
                answer = players[mover].send(f"{genmove[mover]} {GTP_COLOR[c]}")
                # a pause of the match (kill -STOP) is neither side's thinking
                took = time.perf_counter() - asked - players[mover].paused
                thinking[mover][0] += took
                thinking[mover][1] += 1
                if clock is not None and not clock.spend(took):
                    return "time", (f"{LETTER[c]} ({mover}) lost on time: move {len(moves) + 1} "
                                    f"took {clock.longest:.2f} s at the most"), 3 - c
                try:
                    move = parse_genmove(answer, size)
                except ValueError as e:
                    raise Forfeit(mover, "garbage", f"genmove {GTP_COLOR[c]}: {e}") from None
                if move == "resign":
                    return "resignation", f"{LETTER[c]} ({mover}) resigned", 3 - c
                p = PASS if move is None else board.point(*move)
                why = board.legality(p, c)
                if why is not None:
                    raise Forfeit(mover, "illegal",
                                  f"genmove {GTP_COLOR[c]} answered {answer.strip()} ({why})")
                board.play(p, c)
                moves.append((c, move))
                players[other].send(f"play {GTP_COLOR[c]} {format_vertex(move, size)}")
                passes = passes + 1 if move is None else 0
                if keep and cfg.resumable:
                    save_partial(partial, size, moves, thinking, clocks,
                                 before + time.perf_counter() - started, resumed)

        end, reason, winner = play_moves({r: "genmove" for r in ROLES}, cfg.max_moves, True)
        if end == "two passes":
            dead = dead_lists(board, players, notes)
            if dead["engine"] is not None and dead["opponent"] is not None \
                    and dead["engine"] != dead["opponent"]:
                # the programs disagree on the dead stones: as KGS has its
                # players do, they play on (cleanup) until two passes again,
                # and a stone nobody captured is alive
                before = len(moves)
                cleanup = {r: "kgs-genmove_cleanup" if players[r].try_send(
                    "known_command kgs-genmove_cleanup", notes) == "true" else "genmove"
                    for r in ROLES}
                end, reason, winner = play_moves(cleanup, len(moves) + cfg.max_moves)
                rec["play_out"] = {
                    "dead_stones": {r: sorted(format_vertex(v, size) for v in dead[r])
                                    for r in ROLES},
                    "moves": len(moves) - before, "commands": cleanup}
                if end == "two passes":
                    reason = "both players passed, then again after playing out the dead stones"
                    dead = dead_lists(board, players, notes)
                    if dead["engine"] != dead["opponent"]:
                        dead = {r: set() for r in ROLES}    # nobody captured them: alive
                        rec["play_out"]["still_disputed"] = True
        if end in ("two passes", "max moves"):
            if end == "max moves":
                dead = dead_lists(board, players, notes)
            score, scoring = score_game(board, komi, players, gtp_names, notes, dead)
            rec.update(scoring)
            winner = BLACK if score > 0 else WHITE if score < 0 else None
    except Forfeit as f:
        if STOPPING.is_set():
            raise MatchStopped() from None
        error = {"side": f.role, "kind": f.kind, "message": f.message}
        winner = color_of["opponent" if f.role == "engine" else "engine"]
        end = "forfeit"
        reason = f"{LETTER[color_of[f.role]]} ({f.role}) forfeits: {f.kind}: {f.message}"
    finally:
        for p in players.values():
            p.close()
    if STOPPING.is_set():
        raise MatchStopped()
    rec["setup"] = [format_vertex(board.coords(p), size) for p in stones]
    if end == "resignation":
        result = f"{LETTER[winner]}+R"
    elif end == "time":
        result = f"{LETTER[winner]}+T"
    elif end == "forfeit":
        result = f"{LETTER[winner]}+F"
    else:
        result = format_result(score)
    rec.update({
        "black": names["engine" if engine_color == BLACK else "opponent"],
        "white": names["opponent" if engine_color == BLACK else "engine"],
        "result": result,
        "winner": LETTER[winner] if winner is not None else None,
        "engine_won": None if winner is None else winner == engine_color,
        "score": score,
        "moves": len(moves),
        "end": end,
        "reason": reason,
        "error": error,
        "notes": notes,
        "seconds": round(before + time.perf_counter() - started, 2),
        "record": [f"{LETTER[c]} {format_vertex(v, size)}" for c, v in moves],
        "clocks": {role: clock.report() for role, clock in clocks.items()},
        "thinking": {role: {"seconds": round(t, 3), "moves": k} for role, (t, k) in thinking.items()},
    })
    if resumed:
        rec["resumed_after"] = resumed
    rec["sgf"] = str(write_sgf(cfg, tag, rec, moves))
    if cfg.resumable:
        partial.unlink(missing_ok=True)
    return rec


def dead_lists(board: Board, players: dict[str, Side], notes: list[str]) -> dict:
    """Each program's ``final_status_list dead`` (a set of vertices, or None
    when it gives no usable list)."""
    dead: dict[str, set | None] = {}
    for role in ROLES:
        text = players[role].try_send("final_status_list dead", notes)
        dead[role] = parse_vertex_list(text, board, notes, role)
    return dead


def score_game(board: Board, komi: float, players: dict[str, Side],
               gtp_names: dict, notes: list[str], dead: dict) -> tuple[float, dict]:
    """Area score (black minus white minus komi) by the rule in the module
    docstring, from the programs' dead-stone lists ``dead``, and what the
    record should say about it."""
    referee = next((r for r in ROLES if is_gnugo(gtp_names[r])), "engine")
    other = "opponent" if referee == "engine" else "engine"
    used = referee if dead[referee] is not None else other if dead[other] is not None else None
    stones = dead[used] if used else set()
    black, white = area_count(board, stones)
    score = black - white - komi
    info = {
        "referee": f"{referee} ({gtp_names[referee] or players[referee].name})",
        "dead_from": used or "none (plain Tromp-Taylor)",
        "dead_stones": {r: None if dead[r] is None else
                        sorted(format_vertex(v, board.size) for v in dead[r]) for r in ROLES},
        "area": {"black": black, "white": white},
        "referee_final_score": None,
        "score_agrees": None,
    }
    if is_gnugo(gtp_names[referee]):
        text = players[referee].try_send("final_score", notes)
        info["referee_final_score"] = text
        ref = parse_score(text)
        if ref is not None:
            info["score_agrees"] = abs(ref - score) < 1e-6
            if not info["score_agrees"]:
                notes.append(f"referee's final_score {text} differs from the area count "
                             f"{format_result(score)}")
    return score, info


def write_sgf(cfg: MatchConfig, tag: str, rec: dict, moves) -> Path:
    setup = [(BLACK, parse_vertex(v, cfg.size)) for v in rec.get("setup", [])]
    text = dumps(cfg.size, cfg.komi, setup, moves, handicap=len(setup),
                 players=(rec["black"], rec["white"]), result=rec["result"],
                 to_move=WHITE if setup else None)
    game = sgfmill.Sgf_game.from_string(text)
    root = game.get_root()
    root.set("GN", f"match game {rec['game']} of {cfg.games}")
    root.set("DT", time.strftime("%Y-%m-%d"))
    lines = [f"Game {rec['game']} of {cfg.games}: engine under test plays "
             f"{'Black' if rec['engine_color'] == 'B' else 'White'}.",
             f"Result {rec['result']}. Ended by {rec['end']}: {rec['reason']}."]
    if rec.get("referee"):
        lines.append(f"Scoring: area count, dead stones from {rec['dead_from']} "
                     f"(referee {rec['referee']}); area B {rec['area']['black']} "
                     f"W {rec['area']['white']}.")
        if rec.get("referee_final_score") is not None:
            lines.append(f"Referee final_score: {rec['referee_final_score']}.")
    lines += [f"Note: {n}" for n in rec["notes"]]
    root.set("C", "\n".join(lines))
    last = game.get_last_node()
    if last is not root:
        last.set("C", f"Game ended by {rec['end']}: {rec['reason']}. Result {rec['result']}.")
    path = cfg.sgf_dir / f"{tag}.sgf"
    path.write_bytes(game.serialise())
    return path


def summarise(all_records: list[dict]) -> dict:
    """Match statistics; games voided by a bug of this script (end
    "referee error") count in ``void`` and nowhere else."""
    records = [r for r in all_records if r["end"] != "referee error"]
    n = len(records)
    wins = sum(1 for r in records if r["engine_won"] is True)
    losses = sum(1 for r in records if r["engine_won"] is False)
    draws = n - wins - losses
    rate = (wins + 0.5 * draws) / n if n else 0.0
    lo, hi = wilson(wins + 0.5 * draws, n)

    def by_colour(c):
        rs = [r for r in records if r["engine_color"] == c]
        return {"games": len(rs), "wins": sum(1 for r in rs if r["engine_won"] is True)}

    ends: dict[str, int] = {}
    for r in records:
        ends[r["end"]] = ends.get(r["end"], 0) + 1
    errors = [{"game": r["game"], **r["error"]} for r in all_records if r["error"]]
    lengths = [r["moves"] for r in records]
    scored = [r for r in records if r.get("referee")]
    margins = [r["score"] * (1 if r["engine_color"] == "B" else -1) for r in scored
               if r.get("score") is not None]
    return {
        "games": n, "void": len(all_records) - n, "wins": wins, "losses": losses, "draws": draws,
        "win_rate": round(rate, 4), "wilson95": [round(lo, 4), round(hi, 4)],
        "as_black": by_colour("B"), "as_white": by_colour("W"),
        "avg_moves": round(sum(lengths) / n, 1) if n else 0.0,
        "min_moves": min(lengths, default=0), "max_moves": max(lengths, default=0),
        "avg_seconds": round(sum(r["seconds"] for r in records) / n, 1) if n else 0.0,
        "ended_by": ends,
        "errors": errors,
        "errors_by_side": {role: sum(1 for e in errors if e["side"] == role) for role in ROLES},
        "scored_games": len(scored),
        "mean_margin": round(sum(margins) / len(margins), 1) if margins else None,
        "played_out": sum(1 for r in records if r.get("play_out")),
        "score_disagreements": sum(1 for r in scored if r.get("score_agrees") is False),
        "lost_on_time": {role: sum(1 for r in records if r["end"] == "time"
                                   and (r["engine_won"] is False) == (role == "engine"))
                         for role in ROLES},
        "seconds_per_move": {role: per_move(records, role) for role in ROLES},
        "longest_move": {role: max((r["clocks"][role]["longest_move"] for r in records
                                    if role in r.get("clocks", {})), default=None)
                         for role in ROLES},
    }


def per_move(records: list[dict], role: str) -> float | None:
    """Mean genmove answer time of one side over the match, in seconds."""
    t = sum(r["thinking"][role]["seconds"] for r in records if "thinking" in r)
    k = sum(r["thinking"][role]["moves"] for r in records if "thinking" in r)
    return round(t / k, 3) if k else None


def print_summary(s: dict, cfg: MatchConfig, out=None) -> None:
    out = out or sys.stdout
    w = lambda *a: print(*a, file=out)  # noqa: E731
    w(f"match: {s['games']} games on {cfg.size}x{cfg.size}, komi {cfg.komi:g}"
      + (f", handicap {cfg.handicap} (fixed)" if cfg.handicap else "")
      + ", Chinese (area) scoring")
    w(f"  engine:   {shlex.join(cfg.engine)}")
    w(f"  opponent: {shlex.join(cfg.opponent)}")
    lo, hi = s["wilson95"]
    if s["void"]:
        w(f"void games (not counted): {s['void']}")
    w(f"engine wins {s['wins']}, losses {s['losses']}, draws {s['draws']}: "
      f"win rate {100 * s['win_rate']:.1f}% (95% Wilson interval {100 * lo:.1f}%-{100 * hi:.1f}%)")
    b, wh = s["as_black"], s["as_white"]
    w(f"  as black {b['wins']}/{b['games']}, as white {wh['wins']}/{wh['games']}")
    w(f"game length: {s['avg_moves']} moves on average (min {s['min_moves']}, "
      f"max {s['max_moves']}), {s['avg_seconds']} s a game")
    spm = s["seconds_per_move"]
    if spm["engine"] is not None and spm["opponent"] is not None:
        w(f"seconds per move (genmove to answer): engine {spm['engine']:.2f}, "
          f"opponent {spm['opponent']:.2f}")
    w("ended by: " + ", ".join(f"{k} {v}" for k, v in sorted(s["ended_by"].items())))
    if s["scored_games"]:
        w(f"scored games: {s['scored_games']}, referee final_score disagreed with the "
          f"area count in {s['score_disagreements']}; dead-stone lists differed and the "
          f"game was played out in {s['played_out']}; the engine's mean margin in them "
          f"{s['mean_margin']:+g} points")
    if cfg.clock is not None:
        lt, lm = s["lost_on_time"], s["longest_move"]
        w(f"clock {cfg.clock.kgs().split(' ', 1)[1]}: lost on time: engine {lt['engine']}, "
          f"opponent {lt['opponent']}; longest move: engine {lm['engine']} s, "
          f"opponent {lm['opponent']} s")
    es = s["errors_by_side"]
    w(f"errors: {len(s['errors'])} (engine {es['engine']}, opponent {es['opponent']})")
    for e in s["errors"]:
        w(f"  game {e['game']}: {e['side']} {e['kind']}: {e['message']}")


def progress_line(r: dict, total: int) -> str:
    side = "B" if r["engine_color"] == "B" else "W"
    verdict = "win" if r["engine_won"] else "draw" if r["engine_won"] is None else "loss"
    line = (f"[game {r['game']}/{total}] engine={side}: {r['result']} ({verdict}) "
            f"in {r['moves']} moves, {r['end']}, {r['seconds']:.1f} s")
    if r.get("play_out"):
        line += f" (dead stones disputed: played out in {r['play_out']['moves']} moves)"
    if r["error"]:
        line += f" -- {r['error']['side']} {r['error']['kind']}: {r['error']['message']}"
    return line


def settings(cfg: MatchConfig) -> dict:
    """What makes two runs one match: everything but the number of games
    and the folder (``--resume`` may play more games into the same one)."""
    return {"engine": cfg.engine, "opponent": cfg.opponent, "size": cfg.size,
            "komi": cfg.komi, "handicap": cfg.handicap, "engine_color": cfg.engine_color,
            "max_moves": cfg.max_moves, "timeout": cfg.timeout,
            "startup_timeout": cfg.startup_timeout,
            "clock": None if cfg.clock is None else cfg.clock.kgs(),
            "setup": cfg.setup or {}}


def finished_games(sgf_dir: Path) -> dict[int, dict]:
    """The records of the games already played into ``sgf_dir``, by game
    number (1-based), from their ``game-NNN.json`` files."""
    out = {}
    for path in sorted(sgf_dir.glob("game-[0-9][0-9][0-9].json")):
        rec = json.loads(path.read_text())
        out[int(rec["game"])] = rec
    return out


def prepare_folder(cfg: MatchConfig, resume: bool) -> dict[int, dict]:
    """Make ``cfg.sgf_dir`` and return the games to keep: none for a new
    match, which must not write over another's games; with ``resume``, those
    already played, once ``match.json`` there shows the same settings.
    Raises ValueError saying what differs."""
    cfg.sgf_dir.mkdir(parents=True, exist_ok=True)
    stamp = cfg.sgf_dir / "match.json"
    mine = json.loads(json.dumps(settings(cfg)))     # tuples as lists, as read back
    done = finished_games(cfg.sgf_dir)
    if not resume:
        if done or stamp.exists():
            raise ValueError(f"{cfg.sgf_dir} already holds a match: continue it with "
                             "--resume, or choose another --sgf-dir")
        stamp.write_text(json.dumps(mine, indent=2))
        return {}
    if not stamp.exists():
        raise ValueError(f"{cfg.sgf_dir} holds no match to resume (no match.json)")
    theirs = json.loads(stamp.read_text())
    differ = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    if differ:
        raise ValueError(f"--resume: the match in {cfg.sgf_dir} was played with other "
                         f"settings ({', '.join(differ)} differ)")
    return {g: r for g, r in done.items() if g <= cfg.games}


def run_match(cfg: MatchConfig, parallel: int = 1, log=None,
              done: dict[int, dict] | None = None) -> list[dict]:
    """Play the games of ``cfg`` not in ``done`` (records by game number, as
    ``prepare_folder`` returns them) and return every game's record.  Each
    finished game's record is written beside its SGF as ``game-NNN.json``."""
    cfg.sgf_dir.mkdir(parents=True, exist_ok=True)
    log = log or sys.stderr
    done = done or {}
    records: list[dict] = list(done.values())
    lock = threading.Lock()

    def one(i: int) -> dict | None:
        if STOPPING.is_set():
            return None
        try:
            r = play_game(i, cfg)
        except MatchStopped:
            return None
        except Exception as e:  # a bug here must not stop the match either
            r = {"game": i + 1, "engine_color": "B" if i % 2 == 0 else "W",
                 "result": "Void", "winner": None, "engine_won": None, "score": None,
                 "moves": 0, "end": "referee error", "reason": repr(e),
                 "error": {"side": "referee", "kind": "exception", "message": repr(e)},
                 "notes": [], "seconds": 0.0, "record": [], "sgf": None}
            partial_path(cfg, i).unlink(missing_ok=True)
        with lock:
            (cfg.sgf_dir / f"game-{i + 1:03d}.json").write_text(json.dumps(r, indent=1))
            print(progress_line(r, cfg.games), file=log, flush=True)
        return r

    if done:
        print(f"resuming: {len(done)} of {cfg.games} games already played", file=log,
              flush=True)
    STOPPING.clear()
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        futures = [pool.submit(one, i) for i in range(cfg.games) if i + 1 not in done]
        try:
            for f in as_completed(futures):
                if f.result() is not None:
                    records.append(f.result())
        except KeyboardInterrupt:       # Ctrl-C, or SIGTERM in main()
            stop_match()
            raise
    records.sort(key=lambda r: r["game"])
    return records


def check_common_args(ap: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The arguments every game-playing command here takes (bench.match,
    bench.generate): --games, --size, --komi, --parallel and the timeouts;
    a bad one exits through ``ap.error`` (code 2)."""
    if args.games < 1:
        ap.error("--games must be at least 1")
    if not 2 <= args.size <= 25:
        ap.error("--size must be between 2 and 25")
    if not abs(args.komi) <= 1000:
        ap.error("--komi must be a number from -1000 to 1000")
    if args.parallel < 1:
        ap.error("--parallel must be at least 1")
    if not (0 < args.timeout < math.inf and 0 < args.startup_timeout < math.inf):
        ap.error("timeouts must be positive")


def _interrupt(signum, frame) -> None:
    """SIGTERM stops a match as Ctrl-C does (``stop_match``)."""
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.match", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=10, help="games to play (default %(default)s)")
    ap.add_argument("--size", type=int, default=9, help="board size (default %(default)s)")
    ap.add_argument("--komi", type=float, default=7.5, help="komi (default %(default)s)")
    ap.add_argument("--handicap", type=int, default=0,
                    help="fixed handicap stones for Black, White moving first (default: none)")
    ap.add_argument("--engine-color", choices=("alternate", "black", "white"),
                    default="alternate",
                    help="the engine's colour (default: black in odd games, white in even)")
    ap.add_argument("--engine", default=DEFAULT_ENGINE,
                    help="command line of the engine under test (default %(default)r)")
    ap.add_argument("--opponent", default=DEFAULT_OPPONENT,
                    help="command line of the opponent (default %(default)r)")
    ap.add_argument("--sgf-dir", type=Path, default=None,
                    help="where the SGF files go (default runs/match-<timestamp>/)")
    ap.add_argument("--parallel", type=int, default=1, help="games at once (default 1)")
    ap.add_argument("--max-moves", type=int, default=None,
                    help="moves (passes included) after which a game is scored as it stands "
                         "(default 3 * size * size)")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds a program may take to answer one command (default %(default)s)")
    ap.add_argument("--startup-timeout", type=float, default=300.0,
                    help="seconds for the first command, which waits for start-up "
                         "(default %(default)s)")
    ap.add_argument("--clock", default=None, metavar="SPEC",
                    help="clock for both sides: 'absolute MAIN', 'byoyomi MAIN PERIOD PERIODS' "
                         "or 'canadian MAIN PERIOD STONES' (seconds; default: no clock)")
    ap.add_argument("--engine-setup", action="append", default=[], metavar="COMMAND",
                    help="GTP command sent to the engine after komi in every game "
                         "(repeatable)")
    ap.add_argument("--opponent-setup", action="append", default=[], metavar="COMMAND",
                    help="GTP command sent to the opponent after komi in every game "
                         "(repeatable), e.g. Fuego's 'go_rules chinese'")
    ap.add_argument("--json", help="also write the summary and every game's record here")
    ap.add_argument("--resume", action="store_true",
                    help="continue the match in --sgf-dir: play only its games not yet "
                         "played (same settings; --games may be raised)")
    args = ap.parse_args(argv)
    if args.resume and args.sgf_dir is None:
        ap.error("--resume needs --sgf-dir, the folder of the match to continue")
    for command in args.engine_setup + args.opponent_setup:
        if not command.strip() or "\n" in command:
            ap.error(f"bad setup command {command!r}: one GTP command, not empty")
    try:
        clock = ClockSpec.parse(args.clock) if args.clock is not None else None
    except ValueError as e:
        ap.error(f"--clock: {e}")
    check_common_args(ap, args)
    try:
        engine, opponent = split_command(args.engine), split_command(args.opponent)
    except ValueError as e:
        ap.error(f"bad command line: {e}")
    sgf_dir = args.sgf_dir or Path("runs") / f"match-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    if args.handicap and not 2 <= args.handicap <= max_fixed_handicap(args.size):
        ap.error(f"--handicap must be from 2 to {max_fixed_handicap(args.size)} on "
                 f"{args.size}x{args.size} (GTP's fixed places), or 0")
    max_moves = args.max_moves if args.max_moves is not None else 3 * args.size * args.size
    if max_moves < 1:
        ap.error("--max-moves must be at least 1")
    cfg = MatchConfig(engine=engine, opponent=opponent, size=args.size, komi=args.komi,
                      max_moves=max_moves, timeout=args.timeout,
                      startup_timeout=args.startup_timeout, sgf_dir=sgf_dir, games=args.games,
                      clock=clock, setup={"engine": args.engine_setup,
                                          "opponent": args.opponent_setup},
                      handicap=args.handicap, engine_color=args.engine_color, resumable=True)
    try:
        done = prepare_folder(cfg, args.resume)
    except ValueError as e:
        ap.error(str(e))
    print(f"match: {args.games} games, SGF to {sgf_dir}/", file=sys.stderr, flush=True)
    started = time.perf_counter()
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        records = run_match(cfg, args.parallel, done=done)
    except KeyboardInterrupt:
        played = len(finished_games(sgf_dir))
        print(f"match stopped: {played} of {args.games} games played in {sgf_dir}/; the "
              "rest (a game in play from where it stood) with the same command and --resume",
              file=sys.stderr, flush=True)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    summary = summarise(records)
    summary["wall_seconds"] = round(time.perf_counter() - started, 1)
    print_summary(summary, cfg)
    print(f"wall time {summary['wall_seconds']} s; SGF files in {sgf_dir}/")
    if args.json:
        out = {"command": shlex.join([sys.executable, "-m", "bench.match",
                                      *(sys.argv[1:] if argv is None else argv)]),
               "config": {"engine": engine, "opponent": opponent, "size": args.size,
                          "komi": args.komi, "handicap": args.handicap,
                          "engine_color": args.engine_color,
                          "games": args.games, "parallel": args.parallel,
                          "max_moves": max_moves, "timeout": args.timeout,
                          "startup_timeout": args.startup_timeout, "sgf_dir": str(sgf_dir),
                          "clock": args.clock, "engine_setup": args.engine_setup,
                          "opponent_setup": args.opponent_setup},
               "summary": summary, "games": records}
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
