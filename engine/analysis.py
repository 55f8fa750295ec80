"""Analysis for GUIs and game servers, on top of the player's search.

What the GTP extensions (engine/gtp.py binds them) ask of the engine:

* streaming analysis (``lz-analyze``, ``kata-analyze``): one search of the
  current position, with no limit, in a thread of its own, stopped when the
  controller sends anything; every interval the root statistics are read
  while it runs (``Search.snapshot``) and reported.  The tree is the
  player's, so it is kept between analysis, genmove and pondering, and its
  memory cap (``--max-memory``) holds as in any search: once the pool is
  full the search keeps simulating without growing;
* ``lz-genmove_analyze``: the player's own genmove (time management, resign,
  pass rules) with reports while it searches;
* pondering after genmove (``--ponder``) until the next command;
* live GoGui graphics during genmove (``--gfx-interval``);
* data for GUI displays (the network's policy or the heuristic priors, best
  moves, ownership), engine
  parameters, and descriptions for gomill.

Reports follow the GTP side's duck-typed AnalysisReport: moves are
``(col, row)`` tuples or ``None`` for a pass, colours ``"b"``/``"w"``,
winrate and score lead for the player to move, ownership +1 black .. -1
white row-major from the top-left point (A19).  This module does not import
gtp.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.board import BLACK, PASS, WHITE, Board
from engine.config import MAX_GFX_INTERVAL, check_range, count_rave, expand_visits_for, root_rave
from engine.search import SearchResult, position_key

log = logging.getLogger("engine")

_COLORS = {"b": BLACK, "w": WHITE}
_NAMES = {BLACK: "b", WHITE: "w"}
LCB_Z = 1.96            # normal quantile of the winrate's lower confidence bound
MIN_INTERVAL = 0.01     # seconds between reports at the most frequent
MIN_REPORT_SIMS = 100   # playouts of the running search before its first report: the
                        # ownership and score lead are their mean, and one playout's
                        # area is a lead of about 100 points either way (the tree's winrates
                        # would do with fewer)
GUI_ROLLOUTS = 3000     # simulations behind a GUI display when no search of the position is at hand
HALT_POLL = 0.02        # seconds between stop requests to a search that has not stopped yet


@dataclass
class MoveInfo:
    move: tuple[int, int] | None
    visits: int
    winrate: float          # for the player to move
    prior: float            # network probability (heuristic prior value without one)
    lcb: float              # lower confidence bound of the winrate
    pv: list                # principal variation, starting with move
    score_lead: float       # the root's expected area-score lead for the player to move


@dataclass
class Report:
    color: str                          # player to move: "b" or "w"
    moves: list[MoveInfo]               # most visited first
    ownership: list[float] | None       # +1 black .. -1 white, row-major from the top-left
    sims: int
    seconds: float


def lcb(winrate: float, visits: int) -> float:
    """Normal-approximation lower confidence bound of a winrate (0 below 2 visits)."""
    if visits < 2:
        return 0.0
    return max(0.0, winrate - LCB_Z * math.sqrt(max(winrate * (1.0 - winrate), 0.0) / visits))


class Analysis:
    """The engine side of the analysis and GUI commands, for one Player."""

    def __init__(self, player, ponder: bool = False,
                 live: Callable[[Report | None], None] | None = None,
                 live_interval: float = 0.0) -> None:
        self.player = player
        self.ponder = ponder
        self.live = live                    # live graphics sink (GoGui), None: off
        self.live_interval = live_interval  # seconds; 0: off
        self._armed = False                 # ponder after the answer to a genmove
        self._cache: tuple[tuple, Report] | None = None

    # -- positions and reports -------------------------------------------------

    def _board(self, color: str | None) -> Board:
        """A copy of the game's position with ``color`` to move."""
        board = self.player.game.board.copy()
        if color is not None:
            board.to_move = _COLORS[color]
        return board

    def _key(self, board: Board) -> tuple:
        return position_key(board) + (self.player.search_komi(board.to_move),)

    def make_report(self, board: Board, result: SearchResult, *, ownership: bool = False,
                    min_moves: int = 0, max_moves: int = 0) -> Report:
        """A Report of ``result`` (a search of ``board``)."""
        c = board.to_move
        pts = np.fromiter(board.points(), np.int64)
        own = result.ownership
        lead = self.player.expected_lead(c, own, board) if result.sims else 0.0
        visited = [cand for cand in result.candidates if cand.visits > 0]
        if len(visited) < min_moves:
            rest = sorted((cand for cand in result.candidates if cand.visits == 0),
                          key=lambda cand: -cand.prior)
            visited += rest[:min_moves - len(visited)]
        if max_moves > 0:
            visited = visited[:max_moves]

        def vertex(p: int):
            return None if p == PASS else board.coords(p)

        moves = [MoveInfo(vertex(cand.move), cand.visits, cand.winrate, cand.prior,
                          lcb(cand.winrate, cand.visits), [vertex(p) for p in cand.pv], lead)
                 for cand in visited]
        owned = [float(own[p]) for p in pts] if ownership else None
        return Report(_NAMES[c], moves, owned, result.sims, result.seconds)

    # -- searching in the background ---------------------------------------------

    def _start(self, board: Board, avoid: tuple[int, ...] = ()) -> threading.Thread:
        """Search ``board`` with no limit in a thread; ``_halt`` ends it."""
        search = self.player.search
        if position_key(board) != search.root_key:
            search.clear()      # so that no snapshot shows another position's tree
        komi = self.player.search_komi(board.to_move)
        history = self.player.history()

        def work() -> None:
            try:
                search.run(board, komi, avoid=avoid, history=history)
            except Exception:  # noqa: BLE001 - reported, the session goes on
                log.exception("background search failed")

        thread = threading.Thread(target=work, name="analysis-search", daemon=True)
        thread.start()
        return thread

    def _halt(self, thread: threading.Thread) -> None:
        """Stop the search in ``thread`` (again and again: run() clears the
        stop signal when it starts, which may be after the first request)."""
        search = self.player.search
        while thread.is_alive():
            search.stop()
            thread.join(HALT_POLL)

    def _avoid(self, request, board: Board) -> tuple[int, ...]:
        """Root points excluded by the request's avoid/allow clauses (for
        the colour to move; deeper restrictions are not applied)."""
        color = _NAMES[board.to_move]
        banned: set[int] = set()
        for clause in request.avoid:
            if clause.color == color:
                banned |= {board.point(*v) for v in clause.moves if v is not None}
        allowed = [clause for clause in request.allow if clause.color == color]
        if allowed:
            keep = {board.point(*v) for clause in allowed for v in clause.moves if v is not None}
            banned |= set(board.points()) - keep
        return tuple(sorted(banned))

    def _running_result(self, board: Board, seconds: float = 0.0) -> SearchResult | None:
        """The running search of ``board`` as it stands, or None until it
        has ``MIN_REPORT_SIMS`` playouts to report."""
        result = self.player.search.snapshot(board, seconds)
        return result if result.sims >= MIN_REPORT_SIMS else None

    def _snapshot(self, board: Board, request, started: float) -> Report | None:
        """A report of the running search of ``board``, shaped by ``request``;
        None until it has enough playouts (``_running_result``)."""
        result = self._running_result(board, time.perf_counter() - started)
        if result is None:
            return None
        return self.make_report(board, result, ownership=request.ownership,
                                min_moves=request.min_moves, max_moves=request.max_moves)

    # -- GTP: streaming analysis ---------------------------------------------------

    def analyze(self, request, stream, emit: Callable[[Report], None]) -> None:
        """Search the current position (``request.color`` to move) until the
        stream is stopped, emitting a report every ``request.interval``."""
        board = self._board(request.color)
        avoid = self._avoid(request, board)
        search = self.player.search
        interval = max(MIN_INTERVAL, request.interval)
        started = time.perf_counter()
        thread = self._start(board, avoid)
        try:
            while not stream.wait(interval):
                if not thread.is_alive():
                    stream.wait(None)
                    break
                rep = self._snapshot(board, request, started)
                if rep is None:
                    continue
                if not avoid:
                    self._cache = (self._key(board), rep)
                emit(rep)
        finally:
            self._halt(thread)
            if avoid:
                search.clear()   # the avoided moves stay pruned in the tree otherwise

    def genmove_analyze(self, request, stream, emit: Callable[[Report], None]):
        """The player's genmove for ``request.color``, emitting reports while
        it searches; a stop request cuts the search short."""
        search = self.player.search
        board = self._board(request.color)
        interval = max(MIN_INTERVAL, request.interval)
        box: list = []

        def work() -> None:
            try:
                box.append(("ok", self.player.genmove(request.color)))
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                box.append(("error", exc))

        remove = stream.on_stop(search.stop)
        started = time.perf_counter()
        thread = threading.Thread(target=work, name="genmove-analyze", daemon=True)
        thread.start()
        try:
            while thread.is_alive():
                thread.join(interval)
                if thread.is_alive() and not search.stop_event.is_set():
                    rep = self._snapshot(board, request, started)
                    if rep is not None:
                        emit(rep)
        finally:
            remove()
        kind, value = box[0]
        if kind == "error":
            raise value
        self._armed = True
        return value

    # -- GTP: genmove with live graphics, interrupt, ponder --------------------------

    def genmove(self, color: str, cleanup: bool = False):
        """The player's genmove, with live graphics every ``live_interval``
        seconds while it searches (when a sink is set)."""
        if self.live is None or self.live_interval <= 0:
            move = self.player.genmove(color, cleanup=cleanup)
        else:
            move = self._genmove_live(color, cleanup)
        self._armed = True
        return move

    def _genmove_live(self, color: str, cleanup: bool):
        search = self.player.search
        board = self._board(color)
        done = threading.Event()
        sent = threading.Event()
        interval = max(MIN_INTERVAL, self.live_interval)

        def monitor() -> None:
            while not done.wait(interval):
                if search.stop_event.is_set():
                    continue                    # not searching (yet, or any more)
                try:
                    result = self._running_result(board)
                    if result is None:
                        continue
                    rep = self.make_report(board, result)
                    if rep.moves:
                        self.live(rep)
                        sent.set()
                except Exception:  # noqa: BLE001 - graphics must never cost the move
                    log.exception("live graphics failed")

        thread = threading.Thread(target=monitor, name="live-gfx", daemon=True)
        thread.start()
        try:
            return self.player.genmove(color, cleanup=cleanup)
        finally:
            done.set()
            thread.join()
            if sent.is_set():
                self.live(None)             # CLEAR only what was drawn

    def interrupt(self) -> None:
        """Cut the running search short (GTP quit or GoGui interrupt)."""
        self.player.search.stop()

    def idle(self):
        """After a genmove's answer, with pondering on: a runner that searches
        the position (the opponent to move) until the next input line."""
        armed, self._armed = self._armed, False
        if not (armed and self.ponder) or self.player.game.is_over():
            return None

        def ponder(stream) -> None:
            thread = self._start(self._board(None))
            try:
                stream.wait(None)
            finally:
                self._halt(thread)

        return ponder

    def game_over(self) -> None:
        """kgs-game_over: nothing more to ponder."""
        self._armed = False

    def set_rules(self, name: str) -> None:
        """kgs-rules: count with these rules' handicap compensation."""
        self.player.set_rules(name)
        if name == "japanese":
            log.info("rules japanese: counted by area, White getting a point per handicap "
                     "stone (the same result as the territory count, up to one point)")

    # -- GUI displays ------------------------------------------------------------

    def priors(self, color: str | None) -> dict[tuple[int, int], float]:
        """The network's move probabilities, or the heuristic priors'
        values where no network serves this board (points only: a
        network's pass is left out)."""
        board = self._board(color)
        values = self.player.move_probabilities(board.to_move)
        if not values:
            values = self.player.search.priors(board, self.player.scoring_komi)
        return {board.coords(p): v for p, v in values.items() if p != PASS}

    def report(self, color: str | None) -> Report:
        """The current position's report: the last analysis of it, or a
        short search (up to GUI_ROLLOUTS simulations) now."""
        board = self._board(color)
        key = self._key(board)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        cfg = self.player.config
        result = self.player.search.run(board, self.player.search_komi(board.to_move),
                                        max_sims=min(cfg.rollouts, GUI_ROLLOUTS),
                                        seconds=cfg.move_time, history=self.player.history())
        rep = self.make_report(board, result, ownership=True)
        self._cache = (key, rep)
        return rep

    def ownership(self) -> list[float]:
        """+1 black .. -1 white per point, row-major from the top-left."""
        own = self.player.ownership()
        return [float(own[p]) for p in self.player.game.board.points()]

    # -- parameters ----------------------------------------------------------------

    def params(self) -> list[tuple[str, str, str]]:
        cfg = self.player.config
        return [
            ("string", "rollouts", str(cfg.rollouts)),
            ("string", "threads", str(cfg.threads)),
            ("string", "resign", f"{cfg.resign:g}"),
            ("string", "resign_margin", f"{cfg.resign_margin:g}"),
            ("string", "time", "0" if cfg.move_time is None else f"{cfg.move_time:g}"),
            ("bool", "ponder", "1" if self.ponder else "0"),
            ("string", "gfx_interval", f"{self.live_interval:g}"),
        ]

    def set_param(self, key: str, value: str) -> None:
        """Set one parameter; ValueError with the GTP error text if bad (a
        number out of its range names the range: engine/config.py)."""
        def number(kind):
            try:
                return kind(value)
            except ValueError:
                raise ValueError("syntax error") from None

        if key == "rollouts":
            self.player.reconfigure(rollouts=number(int))
        elif key == "threads":
            self.player.reconfigure(threads=number(int))
            self._cache = None
        elif key == "resign":
            self.player.reconfigure(resign=number(float))
        elif key == "resign_margin":
            self.player.reconfigure(resign_margin=number(float))
        elif key == "time":
            seconds = number(float)
            self.player.reconfigure(move_time=seconds if seconds != 0 else None)
        elif key == "ponder":
            if value not in ("0", "1", "true", "false"):
                raise ValueError("syntax error")
            self.ponder = value in ("1", "true")
        elif key == "gfx_interval":
            seconds = number(float)
            check_range("gfx_interval", seconds, 0.0, MAX_GFX_INTERVAL)
            self.live_interval = seconds
        else:
            raise ValueError(f"unknown parameter: {key}")

    # -- descriptions (gomill) ---------------------------------------------------------

    def describe(self) -> str:
        p = self.player
        cfg = p.config
        s = cfg.search
        move_time = "none" if cfg.move_time is None else f"{cfg.move_time:g}s"
        if cfg.policy_only:
            what = f"policy network {p.network.name} alone, no search"
        elif p.network is not None:
            what = (f"UCT + RAVE Monte-Carlo tree search with delayed priors from policy network"
                    f" {p.network.name} on {p.network.device}, and 3x3-pattern playouts")
        else:
            what = "UCT + RAVE Monte-Carlo tree search with heuristic priors and 3x3-pattern playouts"
        return "\n".join([
            f"{p.name} {p.version}: {what}",
            f"rollouts {cfg.rollouts}, time per move {move_time}, threads {cfg.threads},"
            f" resign below {cfg.resign:g}, lag {cfg.lag:g}s, seed {cfg.seed or 'clock'}",
            f"tree cap {s.max_memory} bytes ({s.max_memory / (1 << 30):.2f} GiB),"
            f" c_explore {s.c_explore:g}, rave_equiv {s.rave_equiv:g} (root {root_rave(s):g},"
            f" count {count_rave(s):g}),"
            f" expand_visits {expand_visits_for(s, p.game.size)}"
            + (" (by board size)" if s.expand_visits == 0 else "")
            + f", virtual_loss {s.virtual_loss}",
            f"ponder {'on' if self.ponder else 'off'}, live gfx "
            + (f"every {self.live_interval:g}s" if self.live_interval > 0 else "off")
            + f", rules {self.player.rules} (area scoring)",
        ])

    def explain_last_move(self) -> str:
        """The last genmove's search: rollouts, winrate of the chosen side, best line."""
        r = self.player.last_result
        if r is None:
            return ""
        board = self.player.game.board
        line = " ".join(board.name(p) for p in r.candidates[0].pv) if r.candidates else ""
        komi = self.player.last_komi
        return (f"{r.sims} rollouts in {r.seconds:.2f}s, winrate {r.winrate:.3f}"
                + (f" at dynamic komi {komi:g}" if komi != self.player.scoring_komi else "")
                + f", best line {line or 'none'}")
