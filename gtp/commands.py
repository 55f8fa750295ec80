"""The standard GTP v2 commands, bound to a :class:`~gtp.ports.Player`, and
groups of extension commands.

:func:`standard_registry` returns a :class:`~gtp.registry.Registry` that an
engine can extend with its own commands before handing it to
:func:`gtp.server.serve`.  The ``add_*_commands`` functions register the
extensions GUIs and servers use: streaming analysis (Leela Zero and KataGo
formats), GoGui's analyze commands and live graphics, KGS and gomill.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .ports import Player
from .protocol import BAD_VERTEX_LIST, SYNTAX_ERROR, UNACCEPTABLE_SIZE, GtpError
from .registry import (Color, Float, Int, Many, Optional, Registry, Runner, Str, Stream, Vertex,
                       parse_int)
from .vertex import (MAX_BOARD_SIZE, Move, Point, color_name, format_vertex, parse_color,
                     parse_vertex)

__all__ = [
    "ANALYSIS_INTERVAL_CS",
    "AnalysisReport",
    "AnalysisRequest",
    "Analyst",
    "GuiSource",
    "MoveFilter",
    "MoveReport",
    "PROTOCOL_VERSION",
    "add_analysis_commands",
    "add_gogui_commands",
    "add_gomill_commands",
    "add_kgs_commands",
    "format_kata_info",
    "format_lz_info",
    "gfx_lines",
    "live_gfx",
    "parse_analysis_args",
    "standard_registry",
]

PROTOCOL_VERSION = "2"


def standard_registry(player: Player) -> Registry:
    """Build a registry answering the standard GTP commands for *player*.

    Registered: ``protocol_version``, ``name``, ``version``,
    ``known_command``, ``list_commands``, ``quit``, ``boardsize``,
    ``clear_board``, ``komi``, ``play``, ``genmove``, ``undo``,
    ``showboard``, ``final_score``, ``fixed_handicap``,
    ``place_free_handicap``, ``set_free_handicap``, ``loadsgf``,
    ``printsgf``, ``time_settings`` and ``time_left``.
    """
    reg = Registry(board_size=player.board_size)

    def fmt(move: Move) -> str:
        # A point off the board is an engine bug, not a GTP failure.
        try:
            return format_vertex(move, player.board_size())
        except (ValueError, TypeError) as exc:
            raise RuntimeError(f"engine returned a bad vertex: {exc}") from exc

    def fmt_list(points: Sequence[Point]) -> str:
        return " ".join(fmt(p) for p in points)

    # -- administrative ---------------------------------------------------

    reg.add("protocol_version", lambda: PROTOCOL_VERSION)
    reg.add("name", lambda: player.name)
    reg.add("version", lambda: player.version)
    reg.add("known_command", lambda name: "true" if reg.known(name) else "false", args=(Str,))
    reg.add("list_commands", lambda: "\n".join(reg.names()))
    reg.add("quit", lambda: "", ends_session=True)

    # -- setup --------------------------------------------------------------

    def boardsize(n: int) -> None:
        if not 1 <= n <= MAX_BOARD_SIZE:  # not representable in GTP vertices
            raise GtpError(UNACCEPTABLE_SIZE)
        player.set_board_size(n)

    reg.add("boardsize", boardsize, args=(Int,))
    reg.add("clear_board", lambda: player.clear())
    reg.add("komi", lambda komi: player.set_komi(komi), args=(Float,))

    def fixed_handicap(n: int) -> str:
        return fmt_list(player.fixed_handicap(n))

    def place_free_handicap(n: int) -> str:
        return fmt_list(player.place_free_handicap(n))

    def set_free_handicap(vertices: list[Move]) -> None:
        points = [v for v in vertices if v is not None]
        if len(points) != len(vertices) or len(set(points)) != len(points) or len(points) < 2:
            raise GtpError(BAD_VERTEX_LIST)
        player.set_free_handicap(points)

    reg.add("fixed_handicap", fixed_handicap, args=(Int,))
    reg.add("place_free_handicap", place_free_handicap, args=(Int,))
    reg.add("set_free_handicap", set_free_handicap, args=(Many(Vertex, min_count=1),))

    def loadsgf(path: str, move_number: int | None) -> str:
        return color_name(player.loadsgf(path, move_number))

    def printsgf(path: str | None) -> str:
        sgf = player.printsgf()
        if path is None:
            return sgf
        try:
            # O_NONBLOCK: opening a FIFO nobody reads fails instead of waiting
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK, 0o666)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(sgf)
        except OSError as exc:
            raise GtpError(f"cannot write file: {exc.strerror or exc}") from None
        return ""

    reg.add("loadsgf", loadsgf, args=(Str, Optional(Int)))
    reg.add("printsgf", printsgf, args=(Optional(Str),))

    # -- play ---------------------------------------------------------------

    reg.add("play", lambda color, move: player.play(color, move), args=(Color, Vertex))

    def genmove(color: str) -> str:
        move = player.genmove(color)
        if isinstance(move, str):
            if move.lower() == "resign":
                return "resign"
            raise RuntimeError(f"engine returned a bad genmove result: {move!r}")
        return fmt(move)

    reg.add("genmove", genmove, args=(Color,))
    reg.add("undo", lambda: player.undo())

    # -- information --------------------------------------------------------

    # The diagram starts on its own line, as GNU Go does: "= \n   A B C ...".
    reg.add("showboard", lambda: "\n" + player.showboard().strip("\n"))
    reg.add("final_score", lambda: player.final_score())

    # -- time control -------------------------------------------------------

    reg.add(
        "time_settings",
        lambda main, byo, stones: player.time_settings(main, byo, stones),
        args=(Int, Int, Int),
    )
    reg.add(
        "time_left",
        lambda color, time, stones: player.time_left(color, time, stones),
        args=(Color, Int, Int),
    )
    return reg


# ---------------------------------------------------------------------------
# Extension command groups.  Each binds a small, duck-typed engine object; the
# engine never imports this package (see the README section "Analysis and GUI
# commands" for the wire formats).
# ---------------------------------------------------------------------------

ANALYSIS_INTERVAL_CS = 100
"""Report interval, in centiseconds, when an analysis command names none."""


@dataclass
class MoveFilter:
    """An ``avoid`` or ``allow`` clause of an analysis command."""

    color: str                  # "b" or "w"
    moves: list[Move]
    until_depth: int            # 1: only the next move


@dataclass
class AnalysisRequest:
    """What an analysis command asks for, with its arguments parsed.

    *color* is ``None`` for the player to move.  *interval* is in seconds.
    ``max_moves == 0`` means no limit.
    """

    color: str | None = None
    interval: float = ANALYSIS_INTERVAL_CS / 100
    min_moves: int = 0
    max_moves: int = 0
    ownership: bool = False
    avoid: list[MoveFilter] = field(default_factory=list)
    allow: list[MoveFilter] = field(default_factory=list)


class MoveReport(Protocol):
    """One candidate move of an analysis report (engine side, duck-typed)."""

    move: Move                  # the candidate, None for a pass
    visits: int
    winrate: float              # 0..1 for the player to move
    prior: float                # 0..1
    lcb: float                  # 0..1, lower confidence bound of the winrate
    pv: list[Move]              # principal variation, starting with *move*
    score_lead: float           # points, for the player to move


class AnalysisReport(Protocol):
    """One analysis report (engine side, duck-typed)."""

    color: str                          # the player to move: "b" or "w"
    moves: list[MoveReport]             # best first
    ownership: list[float] | None       # size*size, row-major from A19, +1 = black


class Analyst(Protocol):
    """What the analysis commands need from an engine."""

    def analyze(self, request: AnalysisRequest, stream: Stream,
                emit: Callable[[AnalysisReport], None]) -> None:
        """Search the current position, calling *emit* every
        ``request.interval`` seconds, until ``stream.stopped``."""
        ...

    def genmove_analyze(self, request: AnalysisRequest, stream: Stream,
                        emit: Callable[[AnalysisReport], None]) -> object:
        """Like ``genmove request.color`` with reports on the way; returns
        the move played (a point, ``None`` or ``"resign"``).  A stop request
        cuts the search short."""
        ...


def _parse_bool(token: str) -> bool:
    value = token.lower()
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    raise GtpError(SYNTAX_ERROR)


def _parse_count(token: str) -> int:
    return parse_int(token)


def _parse_move_list(token: str, size: int) -> list[Move]:
    moves = [parse_vertex(t, size) for t in token.split(",") if t]
    if not moves:
        raise GtpError(SYNTAX_ERROR)
    return moves


def parse_analysis_args(tokens: Sequence[str], size: int, *, kata: bool = False,
                        need_color: bool = False) -> AnalysisRequest:
    """Parse ``[color] [interval] [keyword value ...]`` (Leela Zero/KataGo).

    The interval is in centiseconds, bare or as ``interval N``.  Keywords:
    ``minmoves N``, ``maxmoves N``, ``avoid COLOR V1,V2,... DEPTH``,
    ``allow COLOR V1,... DEPTH`` and, with *kata*, ``ownership true|false``.
    Anything else is a ``syntax error``.
    """
    req = AnalysisRequest()
    toks = list(tokens)
    i = 0
    if i < len(toks):
        try:
            req.color = parse_color(toks[i])
            i += 1
        except GtpError:
            pass
    if need_color and req.color is None:
        raise GtpError(SYNTAX_ERROR)
    if i < len(toks) and toks[i].isascii() and toks[i].isdigit():
        req.interval = max(1, _parse_count(toks[i])) / 100
        i += 1

    def take(k: int) -> list[str]:
        nonlocal i
        if i + k > len(toks):
            raise GtpError(SYNTAX_ERROR)
        got = toks[i:i + k]
        i += k
        return got

    while i < len(toks):
        key = toks[i].lower()
        i += 1
        if key == "interval":
            req.interval = max(1, _parse_count(take(1)[0])) / 100
        elif key == "minmoves":
            req.min_moves = _parse_count(take(1)[0])
        elif key == "maxmoves":
            req.max_moves = _parse_count(take(1)[0])
        elif key in ("avoid", "allow"):
            color, moves, depth = take(3)
            until = _parse_count(depth)
            if until < 1:
                raise GtpError(SYNTAX_ERROR)
            clause = MoveFilter(parse_color(color), _parse_move_list(moves, size), until)
            (req.avoid if key == "avoid" else req.allow).append(clause)
        elif kata and key == "ownership":
            req.ownership = _parse_bool(take(1)[0])
        else:
            raise GtpError(SYNTAX_ERROR)
    return req


def _vertex_text(move: Move, size: int) -> str:
    return format_vertex(move, size)


def format_lz_info(report: AnalysisReport, size: int) -> str:
    """Leela Zero's analysis line: one ``info`` chunk per candidate,
    winrate/prior/lcb as integers in 1/10000."""
    chunks = []
    for order, m in enumerate(report.moves):
        pv = " ".join(_vertex_text(v, size) for v in m.pv) or _vertex_text(m.move, size)
        chunks.append(
            f"info move {_vertex_text(m.move, size)} visits {int(m.visits)}"
            f" winrate {_permyriad(m.winrate)} prior {_permyriad(m.prior)}"
            f" lcb {_permyriad(m.lcb)} order {order} pv {pv}")
    return " ".join(chunks)


def format_kata_info(report: AnalysisReport, size: int, ownership: bool = False) -> str:
    """KataGo's analysis line: float winrates, ``scoreLead``, and with
    *ownership* an ``ownership`` tail of size*size values row-major from
    A19, from the point of view of the player to move (as winrate)."""
    chunks = []
    for order, m in enumerate(report.moves):
        pv = " ".join(_vertex_text(v, size) for v in m.pv) or _vertex_text(m.move, size)
        chunks.append(
            f"info move {_vertex_text(m.move, size)} visits {int(m.visits)}"
            f" winrate {_unit(m.winrate):.6f} scoreLead {m.score_lead:.3f}"
            f" prior {_unit(m.prior):.6f} lcb {_unit(m.lcb):.6f} order {order} pv {pv}")
    line = " ".join(chunks)
    if ownership and report.ownership is not None:
        sign = 1.0 if report.color == "b" else -1.0
        line += " ownership " + " ".join(f"{sign * v + 0.0:.4f}" for v in report.ownership)
    return line


def _unit(x: float) -> float:
    return min(1.0, max(0.0, float(x)))


def _permyriad(x: float) -> int:
    return int(round(_unit(x) * 10000))


def _format_genmove(move: object, size: int) -> str:
    if isinstance(move, str):
        if move.lower() == "resign":
            return "resign"
        raise RuntimeError(f"engine returned a bad genmove result: {move!r}")
    return format_vertex(move, size)  # type: ignore[arg-type]


def add_analysis_commands(reg: Registry, analyst: Analyst) -> None:
    """Register the streaming analysis commands.

    ``lz-analyze [color] [interval] ...`` and ``lz-genmove_analyze color
    [interval] ...`` in Leela Zero's format; ``kata-analyze``,
    ``kata-genmove_analyze``, ``analyze`` and ``genmove_analyze`` in
    KataGo's (float winrates, ``scoreLead``, ``ownership true``).  The
    analysis commands run until the next input line; the genmove ones end
    with ``play MOVE`` after the move is played.
    """

    def command(kata: bool, genmove: bool) -> Callable[[list[str]], Runner]:
        def handler(args: list[str]) -> Runner:
            size = reg.board_size()
            req = parse_analysis_args(args, size, kata=kata, need_color=genmove)

            def emit_to(stream: Stream) -> Callable[[AnalysisReport], None]:
                def emit(report: AnalysisReport) -> None:
                    if not report.moves:
                        return
                    if kata:
                        stream.write(format_kata_info(report, size, req.ownership))
                    else:
                        stream.write(format_lz_info(report, size))
                return emit

            if genmove:
                def run_genmove(stream: Stream) -> str:
                    move = analyst.genmove_analyze(req, stream, emit_to(stream))
                    return "play " + _format_genmove(move, size)
                return run_genmove

            def run(stream: Stream) -> None:
                analyst.analyze(req, stream, emit_to(stream))
            return run

        return handler

    for name, kata, genmove in (("lz-analyze", False, False), ("lz-genmove_analyze", False, True),
                                ("kata-analyze", True, False), ("kata-genmove_analyze", True, True),
                                ("analyze", True, False), ("genmove_analyze", True, True)):
        reg.add(name, command(kata, genmove), raw=True, streaming=True, interruptible=not genmove)


# -- GoGui ----------------------------------------------------------------------


class GuiSource(Protocol):
    """What the GoGui display commands need from an engine."""

    def priors(self, color: str | None) -> dict[Point, float]:
        """Prior (0..1) of each candidate move: the policy network's
        probability, or a heuristic value where the engine has no network."""
        ...

    def report(self, color: str | None) -> AnalysisReport:
        """A search report of the current position (candidates, best first)."""
        ...

    def ownership(self) -> list[float]:
        """size*size values row-major from A19, +1 black .. -1 white."""
        ...

    def params(self) -> list[tuple[str, str, str]]:
        """``(type, key, value)`` per parameter; type ``bool`` or ``string``."""
        ...

    def set_param(self, key: str, value: str) -> None:
        """Set a parameter; ``ValueError(text)`` when the key or value is bad."""
        ...


def gfx_lines(report: AnalysisReport, size: int, top: int = 8) -> list[str]:
    """GoGui gfx for a search report: the visits of the best moves as labels,
    the best one marked, its principal variation, and a status text.  GoGui
    draws the variation as numbered stones that hide any label on their
    points, so only the candidates the variation leaves uncovered are
    labelled (the best move's visits are in the text)."""
    moves = [m for m in report.moves if m.visits > 0]
    if not moves:
        return []
    best = moves[0]
    covered = {v for v in best.pv if v is not None}
    lines = []
    labelled = [m for m in moves[:top] if m.move is not None and m.move not in covered]
    if labelled:
        lines.append("LABEL " + " ".join(f"{format_vertex(m.move, size)} {m.visits}"
                                         for m in labelled))
    if best.move is not None:
        lines.append(f"SQUARE {format_vertex(best.move, size)}")
    lines.append("VAR " + _var(report.color, best.pv, size))
    total = sum(m.visits for m in moves)
    lines.append(f"TEXT {format_vertex(best.move, size)} winrate {best.winrate:.3f}"
                 f" visits {best.visits}/{total}")
    return lines


def live_gfx(report: AnalysisReport | None, size: int) -> str:
    """A live-graphics block for stderr: ``gogui-gfx:``, gfx lines, empty
    line; ``None`` gives the CLEAR that ends a search's display."""
    if report is None:
        return "gogui-gfx: CLEAR\n"
    return "gogui-gfx:\n" + "".join(ln + "\n" for ln in gfx_lines(report, size)) + "\n"


def _var(color: str, pv: Sequence[Move], size: int) -> str:
    out = []
    c = color
    for v in pv:
        out.append(f"{c} {'PASS' if v is None else format_vertex(v, size)}")
        c = "w" if c == "b" else "b"
    return " ".join(out)


GFX_MOVES = 10
"""Moves shown by the GoGui prior, visit and winrate displays."""

WINRATE_MIN_SHARE = 0.1
"""A move's winrate is shown once it has this share of the most visited
move's visits (Lizzie hides statistics below the same ratio)."""


def add_gogui_commands(reg: Registry, gui: GuiSource, prefix: str = "") -> None:
    """Register ``gogui-analyze_commands``, ``gogui-interrupt``, ``cputime``
    and the display commands it lists (names start with *prefix*):

    * ``PREFIXpriors [color]`` (gfx): the prior (policy) of the best
      GFX_MOVES moves of at least 1%, as INFLUENCE (scaled so the best is
      1) and as labels (%): every mark has its label;
    * ``PREFIXvisits [color]`` / ``PREFIXwinrates [color]`` (pspairs): the
      visits / winrate (%) of the most visited moves (winrates only of
      those with WINRATE_MIN_SHARE of the most visited one's visits: a
      handful of visits gives a meaningless extreme);
    * ``cputime``: the CPU seconds this process has used, all threads
      (gogui-twogtp's and gogui-regress's CPU times);
    * ``PREFIXpv [color]`` (gfx): the principal variation as VAR;
    * ``PREFIXownership`` (dboard): +1 black .. -1 white;
    * ``PREFIXparams [key value]`` (param): engine parameters;
    * ``final_status_list dead`` (plist), when registered.
    """
    size = reg.board_size

    def entries() -> list[str]:
        out = [
            f"gfx/Prior heat map/{prefix}priors %m",
            f"pspairs/Visits of the best moves/{prefix}visits %m",
            f"pspairs/Winrates of the best moves/{prefix}winrates %m",
            f"gfx/Principal variation/{prefix}pv %m",
            f"dboard/Ownership/{prefix}ownership",
        ]
        if reg.known("final_status_list"):
            out.append("plist/Dead stones/final_status_list dead")
        out.append(f"param/Engine parameters/{prefix}params")
        return out

    def priors(color: str | None) -> str:
        values = gui.priors(color)
        ranked = sorted(((p, v) for p, v in values.items() if round(100 * v) >= 1),
                        key=lambda kv: (-kv[1], kv[0]))[:GFX_MOVES]
        if not ranked:
            return ""
        top = ranked[0][1]
        influence = " ".join(f"{format_vertex(p, size())} {v / top:.2f}" for p, v in ranked)
        labels = " ".join(f"{format_vertex(p, size())} {round(100 * v)}" for p, v in ranked)
        return f"INFLUENCE {influence}\nLABEL {labels}"

    def pairs(color: str | None, what: str) -> str:
        report = gui.report(color)
        moves = [m for m in report.moves if m.visits > 0 and m.move is not None][:GFX_MOVES]
        if what == "visits":
            return " ".join(f"{format_vertex(m.move, size())} {m.visits}" for m in moves)
        most = max((m.visits for m in moves), default=0)
        return " ".join(f"{format_vertex(m.move, size())} {round(100 * m.winrate)}" for m in moves
                        if m.visits >= WINRATE_MIN_SHARE * most)

    def pv(color: str | None) -> str:
        report = gui.report(color)
        moves = [m for m in report.moves if m.visits > 0]
        return "VAR " + _var(report.color, moves[0].pv, size()) if moves else ""

    def ownership() -> str:
        values = gui.ownership()
        n = size()
        return "\n" + "\n".join(" ".join(f"{v + 0.0:.2f}" for v in values[r * n:(r + 1) * n])
                                for r in range(n))

    def params(args: list[str]) -> str:
        if not args:
            return "\n".join(f"[{kind}] {key} {value}" for kind, key, value in gui.params())
        if len(args) != 2:
            raise GtpError(SYNTAX_ERROR)
        gui.set_param(args[0], args[1])
        return ""

    reg.add("gogui-analyze_commands", lambda: "\n".join(entries()))
    reg.add("cputime", lambda: f"{time.process_time():.3f}")
    reg.add("gogui-interrupt", lambda: "")   # the work is done by "# interrupt" lines
    reg.add(f"{prefix}priors", priors, args=(Optional(Color),))
    reg.add(f"{prefix}visits", lambda color: pairs(color, "visits"), args=(Optional(Color),))
    reg.add(f"{prefix}winrates", lambda color: pairs(color, "winrates"), args=(Optional(Color),))
    reg.add(f"{prefix}pv", pv, args=(Optional(Color),))
    reg.add(f"{prefix}ownership", ownership)
    reg.add(f"{prefix}params", params, raw=True)


# -- KGS ------------------------------------------------------------------------

KGS_RULES = ("japanese", "chinese", "aga", "new_zealand")


def add_kgs_commands(reg: Registry, player: Player,
                     game_over: Callable[[], None] | None = None,
                     rules: Callable[[str], None] | None = None) -> None:
    """Register ``kgs-time_settings``, ``kgs-game_over`` and ``kgs-rules``.

    ``kgs-time_settings none | absolute MAIN | byoyomi MAIN PERIOD PERIODS |
    canadian MAIN PERIOD STONES`` maps onto :meth:`Player.time_settings`:
    none is ``0 1 0`` (GTP's "byo-yomi time but no stones": no limit),
    absolute ``MAIN 0 0``, Japanese byo-yomi one stone per period
    (``MAIN PERIOD 1``; the further periods are a safety margin the engine
    does not plan to spend; no periods is absolute time), Canadian
    ``MAIN PERIOD STONES`` (0 stones is a syntax error).  *game_over* and
    *rules* receive ``kgs-game_over`` and the rules' name.
    """

    def kgs_time_settings(args: list[str]) -> None:
        if not args:
            raise GtpError(SYNTAX_ERROR)
        kind, rest = args[0].lower(), args[1:]
        counts = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}
        if kind not in counts or len(rest) != counts[kind]:
            raise GtpError(SYNTAX_ERROR)
        values = [_parse_count(t) for t in rest]
        if kind == "none":
            player.time_settings(0, 1, 0)       # GTP: byo-yomi time with no stones = no limit
        elif kind == "absolute":
            player.time_settings(values[0], 0, 0)
        elif kind == "byoyomi":
            main, period, periods = values
            if periods == 0 or period == 0:
                player.time_settings(main, 0, 0)
            else:
                player.time_settings(main, period, 1)
        else:
            main, period, stones = values
            if stones == 0:
                raise GtpError(SYNTAX_ERROR)
            player.time_settings(main, period, stones)

    def kgs_game_over() -> None:
        if game_over is not None:
            game_over()

    def kgs_rules(name: str) -> None:
        if name.lower() not in KGS_RULES:
            raise GtpError(SYNTAX_ERROR)
        if rules is not None:
            rules(name.lower())

    reg.add("kgs-time_settings", kgs_time_settings, raw=True)
    reg.add("kgs-game_over", kgs_game_over)
    reg.add("kgs-rules", kgs_rules, args=(Str,))


# -- gomill ---------------------------------------------------------------------


def add_gomill_commands(reg: Registry, describe: Callable[[], str],
                        explain: Callable[[], str]) -> None:
    """Register ``gomill-describe_engine`` (*describe*'s text),
    ``gomill-cpu_time`` (CPU seconds of this process, all threads) and
    ``gomill-explain_last_move`` (*explain*'s text)."""
    reg.add("gomill-describe_engine", describe)
    reg.add("gomill-cpu_time", lambda: f"{time.process_time():.3f}")
    reg.add("gomill-explain_last_move", explain)
