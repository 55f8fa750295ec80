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
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .protocol import SYNTAX_ERROR, UNKNOWN_COMMAND, Command, GtpError
from .vertex import parse_color, parse_vertex

__all__ = [
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
    "Response",
    "Str",
    "Vertex",
]

log = logging.getLogger(__name__)

Handler = Callable[..., "str | None"]
"""A command handler: called with the converted arguments, returns the answer."""

BoardSize = Callable[[], int]


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


class IntArg(ArgType):
    """An integer.  GTP ints are unsigned; pass ``signed=True`` to allow ``-``."""

    def __init__(self, signed: bool = False) -> None:
        self.signed = signed
        self.label = "signed int" if signed else "int"

    def convert(self, token: str, board_size: BoardSize) -> int:
        digits = token[1:] if self.signed and token[:1] in "+-" else token
        if not (digits.isascii() and digits.isdigit()):
            raise GtpError(SYNTAX_ERROR)
        return int(token)


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
    ) -> Entry:
        """Register *handler* under *name*.

        *args* declares the arguments: plain types first, then either any
        number of :class:`Optional` or a single :class:`Many`.  With
        ``raw=True`` the handler instead receives the list of raw argument
        tokens as its only argument (for free-form commands) and *args* must
        be empty.  ``ends_session=True`` makes the server stop after a
        successful answer (``quit``).  Registering an existing name raises
        ``ValueError`` unless ``replace=True``.
        """
        specs = tuple(args)
        if not name or any(ch.isspace() or ch == "#" for ch in name):
            raise ValueError(f"invalid command name: {name!r}")
        if name in self._entries and not replace:
            raise ValueError(f"command already registered: {name}")
        if raw and specs:
            raise ValueError("a raw command takes no argument specification")
        self._check_specs(name, specs)
        entry = Entry(name, handler, specs, raw, ends_session)
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
    ) -> Callable[[Handler], Handler]:
        """Decorator form of :meth:`add`; returns the function unchanged."""

        def decorate(handler: Handler) -> Handler:
            self.add(name, handler, args, raw=raw, ends_session=ends_session, replace=replace)
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
        values = entry.convert_args(args, self.board_size)
        result = entry.handler(*values)
        return "" if result is None else str(result)

    def execute(self, cmd: Command) -> Response:
        """Run *cmd* and turn every outcome into a :class:`Response`.

        ``GtpError`` and ``ValueError`` become failures carrying their text;
        any other ``Exception`` becomes ``internal error: <message>`` and its
        traceback is logged.  Never raises an ``Exception``.
        """
        entry = self._entries.get(cmd.name)
        if entry is None:
            return Response(False, UNKNOWN_COMMAND)
        try:
            text = self._run(entry, cmd.args)
        except GtpError as exc:
            return Response(False, exc.text)
        except ValueError as exc:
            return Response(False, str(exc))
        except Exception as exc:  # noqa: BLE001 - the server must survive any handler bug
            log.exception("internal error in GTP command %r", cmd.name)
            return Response(False, f"internal error: {str(exc) or type(exc).__name__}")
        return Response(True, text, quit=entry.ends_session)
