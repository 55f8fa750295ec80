"""Low-level GTP version 2 wire format: line preprocessing, parsing, responses.

This module implements the mechanical parts of the Go Text Protocol, version 2
(draft 2), independent of any engine:

* :func:`preprocess` applies the input rules of spec section 2.5;
* :func:`parse` splits a preprocessed line into a :class:`Command`;
* :func:`format_response` renders a success (``=``) or failure (``?``) answer;
* :class:`GtpError` and the ``*_ERROR`` constants carry the failure texts that
  the specification prescribes for the standard commands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "BAD_VERTEX_LIST",
    "BOARD_NOT_EMPTY",
    "CANNOT_SCORE",
    "CANNOT_UNDO",
    "Command",
    "GtpError",
    "ILLEGAL_MOVE",
    "INVALID_NUMBER_OF_STONES",
    "SYNTAX_ERROR",
    "UNACCEPTABLE_SIZE",
    "UNKNOWN_COMMAND",
    "format_response",
    "parse",
    "preprocess",
]

# Canonical error messages from the GTP v2 specification.
UNKNOWN_COMMAND = "unknown command"
SYNTAX_ERROR = "syntax error"
ILLEGAL_MOVE = "illegal move"
UNACCEPTABLE_SIZE = "unacceptable size"
CANNOT_UNDO = "cannot undo"
BOARD_NOT_EMPTY = "board not empty"
INVALID_NUMBER_OF_STONES = "invalid number of stones"
CANNOT_SCORE = "cannot score"
BAD_VERTEX_LIST = "bad vertex list"


class GtpError(Exception):
    """A command failed; :attr:`text` is the text of the ``?`` answer."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


# Every ASCII control character except HT (0x09) and LF (0x0a), plus DEL.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def preprocess(line: str) -> str | None:
    """Apply the GTP v2 preprocessing rules (spec section 2.5) to one line.

    Control characters other than HT and LF are removed, HT becomes a space,
    everything from ``#`` on is discarded, and surrounding whitespace is
    stripped.  Returns ``None`` when nothing is left: such a line (empty,
    blank or comment only) must be ignored without any response.
    """
    text = _CONTROL_CHARS.sub("", line).replace("\t", " ")
    hash_pos = text.find("#")
    if hash_pos >= 0:
        text = text[:hash_pos]
    text = text.strip()
    return text or None


@dataclass
class Command:
    """One parsed GTP command: optional numeric id, name and raw arguments."""

    id: int | None
    name: str
    args: list[str] = field(default_factory=list)


def parse(line: str) -> Command:
    """Split a (preferably preprocessed) command line into a :class:`Command`.

    A leading token made only of decimal digits is taken as the command id.
    A line holding nothing but an id yields a command with an empty name,
    which a dispatcher reports as an unknown command.
    """
    tokens = line.split()
    cmd_id: int | None = None
    if tokens and tokens[0].isascii() and tokens[0].isdigit():
        cmd_id = int(tokens[0])
        tokens = tokens[1:]
    if not tokens:
        return Command(cmd_id, "", [])
    return Command(cmd_id, tokens[0], tokens[1:])


def format_response(id: int | None, ok: bool, text: str = "") -> str:
    """Render a complete GTP response, terminated by an empty line.

    ``=id text`` on success or ``?id text`` on failure; without an id the
    prefix is a bare ``=`` or ``?``.  An empty *text* gives ``=\\n\\n`` with
    no trailing space.  *text* may span several lines; blank lines inside it
    are removed (an empty line would end the response early) and trailing
    whitespace is trimmed.  The first line may be empty when more lines
    follow, so an answer such as a board diagram can start on its own line.
    """
    prefix = ("=" if ok else "?") + ("" if id is None else str(id))
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    first = lines[0]
    rest = [ln for ln in lines[1:] if ln]
    body = "\n".join([first, *rest]) if rest else first
    if not body:
        return prefix + "\n\n"
    return f"{prefix} {body}\n\n"
