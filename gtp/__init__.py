"""A Go Text Protocol (GTP v2) library, independent of any engine.

Standard library only.  The engine side implements :class:`Player`; the
typical main program is::

    from gtp import serve, standard_registry

    registry = standard_registry(player)
    registry.add("kgs-genmove_cleanup", handler, args=(Color,))   # extensions
    serve(registry)

:class:`GtpClient` drives another engine (e.g. GNU Go) as a subprocess.
"""

from .client import GtpClient, GtpClientError
from .commands import PROTOCOL_VERSION, standard_registry
from .ports import GenMoveResult, Player
from .protocol import (
    BAD_VERTEX_LIST,
    BOARD_NOT_EMPTY,
    CANNOT_SCORE,
    CANNOT_UNDO,
    ILLEGAL_MOVE,
    INVALID_NUMBER_OF_STONES,
    SYNTAX_ERROR,
    UNACCEPTABLE_SIZE,
    UNKNOWN_COMMAND,
    Command,
    GtpError,
    format_response,
    parse,
    preprocess,
)
from .registry import (
    ArgType,
    Color,
    Float,
    Int,
    IntArg,
    Many,
    Optional,
    Registry,
    Response,
    Str,
    Vertex,
)
from .server import serve
from .vertex import (
    COLUMN_LETTERS,
    MAX_BOARD_SIZE,
    PASS,
    Move,
    Point,
    color_name,
    format_vertex,
    parse_color,
    parse_vertex,
)

__all__ = [
    "ArgType",
    "BAD_VERTEX_LIST",
    "BOARD_NOT_EMPTY",
    "CANNOT_SCORE",
    "CANNOT_UNDO",
    "COLUMN_LETTERS",
    "Color",
    "Command",
    "Float",
    "GenMoveResult",
    "GtpClient",
    "GtpClientError",
    "GtpError",
    "ILLEGAL_MOVE",
    "INVALID_NUMBER_OF_STONES",
    "Int",
    "IntArg",
    "MAX_BOARD_SIZE",
    "Many",
    "Move",
    "Optional",
    "PASS",
    "PROTOCOL_VERSION",
    "Player",
    "Point",
    "Registry",
    "Response",
    "SYNTAX_ERROR",
    "Str",
    "UNACCEPTABLE_SIZE",
    "UNKNOWN_COMMAND",
    "Vertex",
    "color_name",
    "format_response",
    "format_vertex",
    "parse",
    "parse_color",
    "parse_vertex",
    "preprocess",
    "serve",
    "standard_registry",
]
