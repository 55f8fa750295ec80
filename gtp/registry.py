"""A registry of GTP commands with declarative, typed argument specifications.

The registry is the single source of truth for which commands exist:
``list_commands`` and ``known_command`` are derived from it, and extension
commands (``kgs-genmove_cleanup``, ``lz-analyze``, ...) are added the same way
as the standard ones::

    reg = Registry(board_size=player.board_size)
    reg.add("play", lambda color, move: player.play(color, move), args=(Color, Vertex))
    reg.add("loadsgf", handler, args=(Str, Optional(Int)))
    reg.add("set_free_handicap", handler, args=(Many(Vertex, min_count=1),))
    reg.add("lz-analyze", handler, raw=True)      # handler(args: list[str])

    @reg.command("komi", args=(Float,))
    def komi(value: float) -> str: ...

The registry converts the arguments before calling a handler: a wrong number of
arguments or a token that does not convert answers ``? syntax error``.  A
handler returns the answer text (``str``; ``None`` counts as empty) and fails
by raising :class:`~gtp.protocol.GtpError` or ``ValueError``; see
:meth:`Registry.execute`.

Streaming commands (``lz-analyze``, ``lz-genmove_analyze``, ...) answer ``=``
at once and then write output lines while they run; :func:`gtp.server.serve`
runs them in a background thread.  Their handler checks the arguments and
returns a *runner*, ``runner(stream) -> str | None``, which writes lines with
:meth:`Stream.write` until :attr:`Stream.stopped` (or until it is done) and
returns the final text of the response::

    def lz_analyze(args: list[str]) -> Runner:
        request = parse_request(args)          # GtpError -> "? syntax error"
        return lambda stream: analyst.analyze(request, stream, ...)

    reg.add("lz-analyze", lz_analyze, raw=True, streaming=True)

An ``interruptible`` streaming command (the default: analysis) is stopped by
any input line; one registered with ``interruptible=False``
(``lz-genmove_analyze``) runs to its end, and only ``quit`` (or a GoGui
``# interrupt`` line) stops it early.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .protocol import SYNTAX_ERROR, UNKNOWN_COMMAND, Command, GtpError
from .vertex import parse_color, parse_vertex

__all__ = [
    "GTP_INT_MAX",
    "ArgType",
    "Color",
    "Entry",
    "Float",
    "Handler",
    "Int",
    "IntArg",
    "Many",
    "Optional",
    "Registry",
    "parse_int",
    "Response",
    "Runner",
    "Str",
    "Stream",
    "Vertex",
]

log = logging.getLogger(__name__)

Handler = Callable[..., "str | None"]
"""A command handler: called with the converted arguments, returns the answer."""

BoardSize = Callable[[], int]

Runner = Callable[["Stream"], "str | None"]
"""The body of a streaming command: writes lines on the stream, returns the final text."""


class Stream:
    """The output channel and stop signal of a running streaming command.

    *write_line* receives each output line (without its newline).  With
    *max_lines* the stream asks to stop by itself once that many lines were
    written (used by :meth:`Registry.execute`, which has no input to wait
    for).  Stop callbacks (:meth:`on_stop`) run when a stop is requested and
    may run again while the runner is still going (:meth:`poke`), so a
    search that missed the first signal is stopped by the next one.
    """

    def __init__(self, write_line: Callable[[str], None] | None = None,
                 max_lines: int | None = None) -> None:
        self._write_line = write_line or (lambda line: None)
        self._max_lines = max_lines
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self.lines = 0

    @property
    def stopped(self) -> bool:
        """Whether a stop was requested."""
        return self._stop.is_set()

    def wait(self, seconds: float | None) -> bool:
        """Sleep up to *seconds* or until a stop is requested; True if stopped."""
        return self._stop.wait(seconds)

    def write(self, text: str) -> None:
        """Write output lines; empty lines are dropped (they would end the response)."""
        for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            line = line.rstrip()
            if not line:
                continue
            self._write_line(line)
            with self._lock:
                self.lines += 1
                full = self._max_lines is not None and self.lines >= self._max_lines
            if full:
                self.stop()

    def on_stop(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call *callback* when a stop is requested (at once if it already
        was); returns a function that unregisters it."""
        with self._lock:
            self._callbacks.append(callback)
        if self.stopped:
            self._call(callback)

        def remove() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return remove

    def stop(self) -> None:
        """Request a stop: set :attr:`stopped` and run the stop callbacks."""
        self._stop.set()
        self.poke()

    def poke(self) -> None:
        """Run the stop callbacks again (only after :meth:`stop`)."""
        if not self.stopped:
            return
        with self._lock:
            callbacks = list(self._callbacks)
        for cb in callbacks:
            self._call(cb)

    @staticmethod
    def _call(callback: Callable[[], None]) -> None:
        try:
            callback()
        except Exception:  # noqa: BLE001 - a stop must never fail
            log.exception("stop callback failed")


# ---------------------------------------------------------------------------
# Argument types
# ---------------------------------------------------------------------------


class ArgType:
    """Base class of argument converters.

    :meth:`convert` turns one token into a value, raising
    ``GtpError(SYNTAX_ERROR)`` if it cannot.  *board_size* returns the current
    board size, for converters that need it (vertices).
    """

    label = "arg"
    needs_board_size = False

    def convert(self, token: str, board_size: BoardSize) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.label


GTP_INT_MAX = 2**31 - 1
"""The largest GTP ``int`` (spec section 3.2: 0 <= x <= 2^31 - 1)."""


def parse_int(token: str, signed: bool = False) -> int:
    """A GTP integer, at most :data:`GTP_INT_MAX` in size; ``syntax error``
    otherwise (a sign only with *signed*)."""
    digits = token[1:] if signed and token[:1] in "+-" else token
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 10:
        raise GtpError(SYNTAX_ERROR)
    value = int(token)
    if abs(value) > GTP_INT_MAX:
        raise GtpError(SYNTAX_ERROR)
    return value


class IntArg(ArgType):
    """An integer of at most 2^31 - 1.  GTP ints are unsigned; pass
    ``signed=True`` to allow ``-``."""

    def __init__(self, signed: bool = False) -> None:
        self.signed = signed
        self.label = "signed int" if signed else "int"

    def convert(self, token: str, board_size: BoardSize) -> int:
        return parse_int(token, self.signed)


class _Float(ArgType):
    label = "float"

    def convert(self, token: str, board_size: BoardSize) -> float:
        try:
            value = float(token)
        except ValueError:
            raise GtpError(SYNTAX_ERROR) from None
        if not math.isfinite(value):
            raise GtpError(SYNTAX_ERROR)
        return value


class _Str(ArgType):
    label = "string"

    def convert(self, token: str, board_size: BoardSize) -> str:
        return token


class _Color(ArgType):
    label = "color"

    def convert(self, token: str, board_size: BoardSize) -> str:
        return parse_color(token)


class _Vertex(ArgType):
    label = "vertex"
    needs_board_size = True

    def convert(self, token: str, board_size: BoardSize) -> Any:
        return parse_vertex(token, board_size())


Int: ArgType = IntArg()
"""An unsigned integer."""
Float: ArgType = _Float()
"""A finite float."""
Str: ArgType = _Str()
"""Any token, unchanged."""
Color: ArgType = _Color()
"""A colour, converted to ``"b"`` or ``"w"``."""
Vertex: ArgType = _Vertex()
"""A vertex on the current board, converted to ``(col, row)`` or ``None`` (pass)."""


class Optional(ArgType):
    """An optional trailing argument; *default* is passed when it is absent."""

    def __init__(self, inner: ArgType, default: Any = None) -> None:
        if isinstance(inner, (Optional, Many)):
            raise TypeError("Optional() wraps a plain argument type")
        self.inner = inner
        self.default = default
        self.label = f"[{inner.label}]"
        self.needs_board_size = inner.needs_board_size

    def convert(self, token: str, board_size: BoardSize) -> Any:
        return self.inner.convert(token, board_size)


class Many(ArgType):
    """A variadic trailing argument, passed to the handler as a list.

    At least *min_count* tokens are required.
    """

    def __init__(self, inner: ArgType, min_count: int = 0) -> None:
        if isinstance(inner, (Optional, Many)):
            raise TypeError("Many() wraps a plain argument type")
        if min_count < 0:
            raise ValueError("min_count must be >= 0")
        self.inner = inner
        self.min_count = min_count
        self.label = f"{inner.label}..."
        self.needs_board_size = inner.needs_board_size

    def convert(self, token: str, board_size: BoardSize) -> Any:
        return self.inner.convert(token, board_size)


# ---------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """A registered command."""

    name: str
    handler: Handler
    args: tuple[ArgType, ...] = ()
    raw: bool = False
    ends_session: bool = False
    streaming: bool = False
    interruptible: bool = True

    def convert_args(self, tokens: Sequence[str], board_size: BoardSize) -> list[Any]:
        """Check the argument count and convert *tokens*; ``GtpError`` on failure."""
        if self.raw:
            return [list(tokens)]
        required = [a for a in self.args if not isinstance(a, (Optional, Many))]
        optional = [a for a in self.args if isinstance(a, Optional)]
        many = self.args[-1] if self.args and isinstance(self.args[-1], Many) else None
        n = len(tokens)
        if n < len(required):
            raise GtpError(SYNTAX_ERROR)
        if many is None and n > len(required) + len(optional):
            raise GtpError(SYNTAX_ERROR)
        if many is not None and n - len(required) < many.min_count:
            raise GtpError(SYNTAX_ERROR)

        values: list[Any] = [
            spec.convert(token, board_size) for spec, token in zip(required, tokens)
        ]
        extra = tokens[len(required):]
        if many is not None:
            values.append([many.convert(token, board_size) for token in extra])
        else:
            for i, spec in enumerate(optional):
                values.append(spec.convert(extra[i], board_size) if i < len(extra) else spec.default)
        return values


@dataclass(frozen=True)
class Response:
    """Outcome of executing a command: success flag, answer text, end of session."""

    ok: bool
    text: str
    quit: bool = False


def _no_board_size() -> int:
    raise RuntimeError("this registry has no board_size callable")


class Registry:
    """The set of GTP commands an engine answers, with their argument specs.

    *board_size* is a callable returning the current board size; it is needed
    to convert vertex arguments.
    """

    def __init__(self, board_size: BoardSize | None = None) -> None:
        self._board_size = board_size
        self._entries: dict[str, Entry] = {}
        self._interrupt: Callable[[], None] | None = None
        self._idle: Callable[[], Runner | None] | None = None

    # -- registration -------------------------------------------------------

    def add(
        self,
        name: str,
        handler: Handler,
        args: Iterable[ArgType] = (),
        *,
        raw: bool = False,
        ends_session: bool = False,
        replace: bool = False,
        streaming: bool = False,
        interruptible: bool = True,
    ) -> Entry:
        """Register *handler* under *name*.

        *args* declares the arguments: plain types first, then either any
        number of :class:`Optional` or a single :class:`Many`.  With
        ``raw=True`` the handler instead receives the list of raw argument
        tokens as its only argument (for free-form commands) and *args* must
        be empty.  ``ends_session=True`` makes the server stop after a
        successful answer (``quit``).  Registering an existing name raises
        ``ValueError`` unless ``replace=True``.  ``streaming=True`` makes the
        handler return a :data:`Runner` (see the module documentation);
        ``interruptible=False`` lets such a command run to its end whatever
        input arrives (except ``quit``).
        """
        specs = tuple(args)
        if not name or any(ch.isspace() or ch == "#" for ch in name):
            raise ValueError(f"invalid command name: {name!r}")
        if name in self._entries and not replace:
            raise ValueError(f"command already registered: {name}")
        if raw and specs:
            raise ValueError("a raw command takes no argument specification")
        if streaming and ends_session:
            raise ValueError("a streaming command cannot end the session")
        self._check_specs(name, specs)
        entry = Entry(name, handler, specs, raw, ends_session, streaming, interruptible)
        self._entries[name] = entry
        return entry

    def command(
        self,
        name: str,
        args: Iterable[ArgType] = (),
        *,
        raw: bool = False,
        ends_session: bool = False,
        replace: bool = False,
        streaming: bool = False,
        interruptible: bool = True,
    ) -> Callable[[Handler], Handler]:
        """Decorator form of :meth:`add`; returns the function unchanged."""

        def decorate(handler: Handler) -> Handler:
            self.add(name, handler, args, raw=raw, ends_session=ends_session, replace=replace,
                     streaming=streaming, interruptible=interruptible)
            return handler

        return decorate

    def remove(self, name: str) -> None:
        """Unregister *name* (``KeyError`` if it is not registered)."""
        del self._entries[name]

    def _check_specs(self, name: str, specs: tuple[ArgType, ...]) -> None:
        seen_optional = False
        for i, spec in enumerate(specs):
            if not isinstance(spec, ArgType):
                raise TypeError(f"{name}: argument spec {spec!r} is not an ArgType")
            if isinstance(spec, Many):
                if i != len(specs) - 1 or seen_optional:
                    raise ValueError(f"{name}: Many() must be the only trailing variable argument")
            elif isinstance(spec, Optional):
                seen_optional = True
            elif seen_optional:
                raise ValueError(f"{name}: a required argument cannot follow Optional()")
            if spec.needs_board_size and self._board_size is None:
                raise ValueError(f"{name}: vertex arguments need a registry with board_size")

    # -- queries ------------------------------------------------------------

    def names(self) -> list[str]:
        """Registered command names, sorted (the ``list_commands`` answer)."""
        return sorted(self._entries)

    def known(self, name: str) -> bool:
        """Whether *name* is registered (the ``known_command`` answer)."""
        return name in self._entries

    def get(self, name: str) -> Entry | None:
        """The entry registered under *name*, or ``None``."""
        return self._entries.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)

    # -- hooks ----------------------------------------------------------------

    def set_interrupt(self, fn: Callable[[], None] | None) -> None:
        """*fn* cuts a running command short (e.g. stops a search).

        The server calls it, possibly several times, while a command runs
        that is directly followed by ``quit`` or GoGui's ``# interrupt``
        line.  It is called from another thread than the command's.
        """
        self._interrupt = fn

    def interrupt(self) -> None:
        """Run the interrupt hook, if any (never raises)."""
        if self._interrupt is None:
            return
        try:
            self._interrupt()
        except Exception:  # noqa: BLE001 - an interrupt must never fail
            log.exception("interrupt hook failed")

    def set_idle(self, fn: Callable[[], Runner | None] | None) -> None:
        """*fn* is asked after each answered command for work to do in the
        background until the next input line (pondering): it returns a
        :data:`Runner` or ``None``.  The runner's output is discarded."""
        self._idle = fn

    def idle_task(self) -> Runner | None:
        """The idle hook's runner, or ``None`` (never raises)."""
        if self._idle is None:
            return None
        try:
            return self._idle()
        except Exception:  # noqa: BLE001
            log.exception("idle hook failed")
            return None

    # -- execution ------------------------------------------------------------

    def board_size(self) -> int:
        """The current board size, from the callable given at construction."""
        return (self._board_size or _no_board_size)()

    def call(self, name: str, args: Sequence[str] = ()) -> str:
        """Convert *args*, run the handler of *name* and return its answer.

        Raises ``GtpError`` for an unknown command or bad arguments; whatever
        the handler raises propagates.
        """
        entry = self._entries.get(name)
        if entry is None:
            raise GtpError(UNKNOWN_COMMAND)
        return self._run(entry, args)

    def _run(self, entry: Entry, args: Sequence[str]) -> str:
        if entry.streaming:
            return self._run_stream(entry, self._prepare(entry, args))
        values = entry.convert_args(args, self.board_size)
        result = entry.handler(*values)
        return "" if result is None else str(result)

    def _prepare(self, entry: Entry, args: Sequence[str]) -> Runner:
        values = entry.convert_args(args, self.board_size)
        runner = entry.handler(*values)
        if not callable(runner):
            raise TypeError(f"streaming command {entry.name} returned no runner")
        return runner

    @staticmethod
    def _run_stream(entry: Entry, runner: Runner) -> str:
        """Run a streaming command to its end here, with no input to stop it:
        an interruptible one stops after its first output line."""
        lines: list[str] = []
        stream = Stream(lines.append, max_lines=1 if entry.interruptible else None)
        final = runner(stream)
        if final:
            lines.append(str(final))
        return "\n" + "\n".join(lines) if lines else ""

    def execute(self, cmd: Command) -> Response:
        """Run *cmd* and turn every outcome into a :class:`Response`.

        ``GtpError`` and ``ValueError`` become failures carrying their text;
        any other ``Exception`` becomes ``internal error: <message>`` and its
        traceback is logged.  Never raises an ``Exception``.  A streaming
        command runs here in the caller's thread; an interruptible one is
        stopped after its first output line (the server, which can wait
        for input, uses :meth:`prepare` instead).
        """
        entry = self._entries.get(cmd.name)
        if entry is None:
            return Response(False, UNKNOWN_COMMAND)
        return self._guard(cmd.name, lambda: Response(True, self._run(entry, cmd.args),
                                                      quit=entry.ends_session))

    def prepare(self, cmd: Command) -> tuple[Response | None, Runner | None]:
        """First half of a streaming command: check its arguments.

        Returns ``(None, runner)`` when it may start, or ``(failure, None)``
        with the ``?`` answer to give instead; a handler's exceptions become
        failures as in :meth:`execute`.  Asking this of a command that is not
        streaming is a programming error (``ValueError``).
        """
        entry = self._entries.get(cmd.name)
        if entry is None:
            return Response(False, UNKNOWN_COMMAND), None
        if not entry.streaming:
            raise ValueError(f"{cmd.name} is not a streaming command")
        box: list[Runner] = []

        def start() -> Response:
            box.append(self._prepare(entry, cmd.args))
            return Response(True, "")

        failure = self._guard(cmd.name, start)
        return (None, box[0]) if box else (failure, None)

    @staticmethod
    def _guard(name: str, fn: Callable[[], Response]) -> Response:
        try:
            return fn()
        except GtpError as exc:
            return Response(False, exc.text)
        except ValueError as exc:
            return Response(False, str(exc))
        except Exception as exc:  # noqa: BLE001 - the server must survive any handler bug
            log.exception("internal error in GTP command %r", name)
            return Response(False, f"internal error: {str(exc) or type(exc).__name__}")
