"""The GTP command loop.

:func:`serve` reads commands, dispatches them through a
:class:`~gtp.registry.Registry` and writes exactly one response per command.
Only GTP goes to *out*; diagnostics go through :mod:`logging` (configure it
to write to stderr).
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from .protocol import format_response, parse, preprocess
from .registry import Registry

__all__ = ["serve"]

log = logging.getLogger(__name__)


def serve(registry: Registry, inp: TextIO | None = None, out: TextIO | None = None) -> None:
    """Answer GTP commands from *inp* on *out* until ``quit`` or end of input.

    *inp* and *out* default to ``sys.stdin`` and ``sys.stdout`` (looked up at
    call time; undecodable input bytes are then replaced rather than fatal).
    Blank and comment lines get no response; every other line gets exactly
    one, flushed at once.  A command registered with ``ends_session`` (the
    standard ``quit``) is answered and then the loop returns, leaving any
    further input unread.  A closed output pipe also ends the loop quietly.
    """
    if inp is None:
        inp = sys.stdin
        _tolerate_bad_bytes(inp)
    if out is None:
        out = sys.stdout
    while True:
        raw = inp.readline()
        if not raw:
            log.debug("end of input")
            return
        line = preprocess(raw)
        if line is None:
            continue
        cmd = parse(line)
        log.debug("<< %s", line)
        response = registry.execute(cmd)
        text = format_response(cmd.id, response.ok, response.text)
        log.debug(">> %s", text.rstrip("\n"))
        try:
            out.write(text)
            out.flush()
        except BrokenPipeError:
            log.info("output closed; stopping")
            return
        if response.quit:
            return


def _tolerate_bad_bytes(stream: TextIO) -> None:
    """Make a standard text stream replace undecodable bytes instead of raising."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="replace")
        except (ValueError, OSError):  # pragma: no cover - e.g. already read from
            pass
