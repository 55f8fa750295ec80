"""Drive another GTP engine (e.g. GNU Go) running as a subprocess.

::

    with GtpClient(["gnugo", "--mode", "gtp"], timeout=10) as gnugo:
        gnugo.send("boardsize 9")
        move = gnugo.send("genmove b")     # "D4", "PASS", "resign", ...

The engine's standard output is read by a background thread into a queue, so
a hung engine makes :meth:`GtpClient.send` fail after *timeout* seconds instead
of blocking the caller.  After a timeout, a malformed answer or the death of
the engine the client is closed (the engine killed), since the stream can no
longer be trusted; a ``?`` answer leaves it usable.

Streaming commands (``lz-analyze``, ``kata-analyze``, ``lz-genmove_analyze``)
answer ``=`` and then write lines until the engine hears any input (or, for
some, until they are done); the response then ends with the usual empty line::

    with GtpClient(["leelaz", "--gtp", "-w", "net.gz"]) as engine:
        engine.stream("lz-analyze B 50")          # returns after the "=" line
        line = engine.read_stream_line(1.0)       # a line, or None after 1 s
        lines = engine.stream_lines()             # every line arrived so far
        rest = engine.stop_stream()               # blank line; the lines in flight
        engine.send("name")

One stream at a time: while it is open (:attr:`GtpClient.streaming`),
:meth:`GtpClient.send` and :meth:`GtpClient.stream` raise ``RuntimeError``
rather than lose its lines; :meth:`GtpClient.stop_stream` ends it first
(:meth:`GtpClient.close` does that by itself).
"""

from __future__ import annotations

import logging
import queue
import subprocess
import threading
import time
from collections import deque
from collections.abc import Sequence
from types import TracebackType
from typing import IO, Any, NoReturn

__all__ = ["GtpClient", "GtpClientError"]

log = logging.getLogger(__name__)

_EOF = None  # queue sentinel: the engine closed its stdout
_NOTHING = object()  # _poll_line: no line within the timeout

PAUSE_SLICE = 0.5
"""An answer is awaited in slices of this many seconds; a slice that ends
much later than asked means this process was stopped (``kill -STOP``, as a
long match is paused while something is timed), and the pause does not
count against the command's timeout."""


class _Deadline:
    """When a command's answer is due: *timeout* seconds of this process
    running, pauses left out (:data:`PAUSE_SLICE`); *paused*: the seconds
    of the wait this process spent stopped."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.at = time.monotonic() + timeout
        self.paused = 0.0


class GtpClientError(Exception):
    """A command sent to the engine did not succeed.

    For a ``?`` answer the message is the engine's error text and
    :attr:`failed` is true; for a timeout, a dead engine or a malformed answer
    the message describes the problem and :attr:`failed` is false (and the
    client has been closed).
    """

    def __init__(self, message: str, command: str | None = None, failed: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.command = command
        self.failed = failed


class GtpClient:
    """A GTP engine run as a subprocess and driven through its stdin/stdout.

    *argv* is the engine command line; *timeout* bounds the wait for each
    answer, in seconds.  *stderr* is passed to :class:`subprocess.Popen`
    (the default discards the engine's diagnostics); *cwd* and *env* too.
    """

    def __init__(
        self,
        argv: Sequence[str],
        timeout: float = 30.0,
        *,
        stderr: int | IO[Any] | None = subprocess.DEVNULL,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.timeout = timeout
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._closed = False
        self._streaming: str | None = None     # the streaming command under way
        self._stream_pending: deque[str] = deque()  # stream lines read, not handed out
        self.paused = 0.0
        """Seconds of the last command's wait (:meth:`send`, or
        :meth:`stream` up to its head) that this process spent stopped
        (``kill -STOP``): a match that times its players takes them out."""
        self._proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=cwd,
            env=env,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
        )
        self._reader = threading.Thread(
            target=self._read_stdout, name=f"gtp-client-{self._proc.pid}", daemon=True
        )
        self._reader.start()

    # -- public API -------------------------------------------------------

    @property
    def pid(self) -> int:
        """Process id of the engine."""
        return self._proc.pid

    @property
    def alive(self) -> bool:
        """Whether the client is open and the engine process is running."""
        return not self._closed and self._proc.poll() is None

    @property
    def returncode(self) -> int | None:
        """The engine's exit status, or None while it runs."""
        return self._proc.poll()

    @property
    def streaming(self) -> str | None:
        """The streaming command under way (see :meth:`stream`), or None."""
        return self._streaming

    def send(self, command: str, timeout: float | None = None) -> str:
        """Send one command and return the text of its ``=`` answer.

        The ``=`` (and any id) and the following space are removed, as are
        trailing whitespace and an empty first line (``showboard``), so
        multi-line answers come back as their lines joined by ``\\n``.
        Raises :class:`GtpClientError` on a ``?`` answer (message: the
        error text), a timeout (*timeout* overrides the client's default),
        a dead engine or a malformed answer.  Raises ``RuntimeError`` while
        a stream is open (:meth:`stop_stream` first): the command would end
        the stream and its answer would follow the stream's lines.
        """
        command = self._check_command(command)
        self._write(command)
        lines = self._read_response(command, self.timeout if timeout is None else timeout)
        log.debug("<- %s", "\\n".join(lines))
        return self._parse_response(command, lines)

    def stream(self, command: str, timeout: float | None = None) -> None:
        """Send a streaming command and return once its ``=`` line is read.

        The engine then writes the stream's lines (read them with
        :meth:`read_stream_line` or :meth:`stream_lines`) until it hears any
        input (:meth:`stop_stream`) or, for a command that ends by itself
        (``lz-genmove_analyze``), until it is done.  Text after the ``=``
        (and any id) on the head line is handed out as the first line.

        A ``?`` answer raises :class:`GtpClientError` with :attr:`failed`
        true, as :meth:`send` does, and leaves no stream open; a timeout
        waiting for the head (*timeout* overrides the client's default), a
        dead engine or a malformed head raise it too, closing the client.
        Raises ``RuntimeError`` if a stream is already open.
        """
        command = self._check_command(command)
        timeout = self.timeout if timeout is None else timeout
        self._write(command)
        deadline = _Deadline(timeout)
        head = self._read_head(command, deadline)
        if head.startswith("?"):
            lines = [head, *self._read_body(command, deadline)]
            log.debug("<- %s", "\\n".join(lines))
            self._parse_response(command, lines)  # a "?" answer: raises GtpClientError
            raise AssertionError("unreachable")  # pragma: no cover
        log.debug("<- %s", head)
        text = self._split_head(command, head)
        self._streaming = command
        self._stream_pending.clear()
        if text.strip():
            self._stream_pending.append(text.rstrip())

    def read_stream_line(self, timeout: float = 0.0) -> str | None:
        """The stream's next line, waiting up to *timeout* seconds for it.

        Returns None when no line arrived within *timeout*, and also when
        the engine ended the stream by itself (its empty line): then
        :attr:`streaming` is None and the client is ready for :meth:`send`.
        Raises ``RuntimeError`` when no stream is open, and
        :class:`GtpClientError` (closing the client) when the engine died.
        """
        command = self._stream_command()
        if self._stream_pending:
            return self._stream_pending.popleft()
        line = self._poll_line(command, timeout)
        if line is _NOTHING:
            return None
        assert isinstance(line, str)
        if not line.strip():
            log.debug("<- (%r ended by itself)", command)
            self._streaming = None
            return None
        return line

    def stream_lines(self, timeout: float = 0.0) -> list[str]:
        """Every line of the stream that has arrived, waiting up to *timeout*
        seconds for the first one; ``[]`` if none came.  Stops at the end of
        the stream when the engine ended it by itself (then :attr:`streaming`
        is None).  Raises as :meth:`read_stream_line` does."""
        lines: list[str] = []
        line = self.read_stream_line(timeout)
        while line is not None:
            lines.append(line)
            line = self.read_stream_line(0.0)
        return lines

    def stop_stream(self, timeout: float | None = None) -> list[str]:
        """End the stream: send an empty line, read up to the empty line that
        closes the response and return the lines read on the way (the lines
        that were in flight, and any final line such as ``play D4``).

        Does nothing and returns ``[]`` when no stream is open (also when the
        engine ended it by itself).  A timeout (*timeout* overrides the
        client's default) or a dead engine raise :class:`GtpClientError` and
        close the client.
        """
        command = self._streaming
        if command is None:
            return []
        timeout = self.timeout if timeout is None else timeout
        lines = list(self._stream_pending)
        self._stream_pending.clear()
        self._write("", command)
        deadline = _Deadline(timeout)
        lines += self._read_body(command, deadline)
        log.debug("<- (%r stopped; %d line(s) in flight)", command, len(lines))
        self._streaming = None
        return lines

    def close(self, timeout: float = 2.0) -> None:
        """Stop an open stream, send ``quit``, wait up to *timeout* seconds
        for the engine to exit, kill it otherwise.  Safe to call more than
        once."""
        if self._closed:
            return
        if self._streaming is not None and self._proc.poll() is None:
            try:
                self.stop_stream(timeout)
            except GtpClientError:
                pass
            if self._closed:
                return
        if self._proc.poll() is None:
            try:
                self.send("quit", timeout=timeout)
            except GtpClientError:
                pass
        self._shutdown(timeout)

    def __enter__(self) -> GtpClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "alive" if self.alive else "closed"
        return f"GtpClient({self.argv!r}, pid={self._proc.pid}, {state})"

    # -- internals ----------------------------------------------------------

    def _read_stdout(self) -> None:
        """Reader thread: move the engine's output lines into the queue."""
        stdout = self._proc.stdout
        assert stdout is not None
        try:
            for line in stdout:
                self._lines.put(line)
        except (OSError, ValueError):
            pass
        finally:
            self._lines.put(_EOF)

    def _check_command(self, command: str) -> str:
        """The stripped *command*, checked for :meth:`send` and :meth:`stream`."""
        command = command.strip()
        if not command or "\n" in command or "\r" in command:
            raise ValueError(f"not a single GTP command: {command!r}")
        if self._closed:
            raise GtpClientError("client is closed", command)
        if self._streaming is not None:
            raise RuntimeError(f"cannot send {command!r} while {self._streaming!r} is "
                               "streaming: call stop_stream() first")
        return command

    def _write(self, line: str, command: str | None = None) -> None:
        """Write *line* to the engine (on behalf of *command*, default *line*)."""
        command = line if command is None else command
        if self._closed:
            raise GtpClientError("client is closed", command)
        if self._proc.poll() is not None:
            self._fail(f"engine exited with status {self._proc.returncode}", command)
        log.debug("-> %s", line)
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            self._fail(f"engine exited (cannot write {line!r})", command)

    def _stream_command(self) -> str:
        if self._closed:
            raise GtpClientError("client is closed", self._streaming)
        if self._streaming is None:
            raise RuntimeError("no stream is open")
        return self._streaming

    def _poll_line(self, command: str, timeout: float) -> str | object:
        """The next line (without its line end) within *timeout* s, or
        ``_NOTHING``; fails (closing the client) at end of output."""
        try:
            line = self._lines.get(timeout=timeout) if timeout > 0 else self._lines.get_nowait()
        except queue.Empty:
            return _NOTHING
        if line is _EOF:
            self._engine_gone(command)
        return line.rstrip("\r\n")

    def _next_line(self, command: str, deadline: _Deadline) -> str:
        while True:
            start = time.monotonic()
            wait = min(max(deadline.at - start, 0.0), PAUSE_SLICE)
            line = self._poll_line(command, wait)
            now = time.monotonic()
            late = now - start - wait
            if late > PAUSE_SLICE:      # this process was stopped meanwhile
                deadline.at += late
                deadline.paused += late
            self.paused = deadline.paused
            if line is not _NOTHING:
                assert isinstance(line, str)
                return line
            if now >= deadline.at:
                self._fail(f"timeout: no answer to {command!r} within {deadline.timeout:g} s",
                           command)

    def _engine_gone(self, command: str) -> NoReturn:
        """The engine closed its output: fail with its exit status."""
        self._lines.put(_EOF)  # keep reporting EOF to later reads
        code = self._proc.poll()
        if code is None:
            try:
                code = self._proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
        status = "" if code is None else f" with status {code}"
        self._fail(f"engine exited{status} while answering {command!r}", command)

    def _read_head(self, command: str, deadline: _Deadline) -> str:
        """The first line of a response: its ``=`` or ``?`` status line."""
        first = self._next_line(command, deadline)
        while not first.strip():  # tolerate stray blank lines before an answer
            first = self._next_line(command, deadline)
        if first[0] not in "=?":
            self._fail(f"malformed answer to {command!r}: {first!r}", command)
        return first

    def _read_body(self, command: str, deadline: _Deadline) -> list[str]:
        """The lines of a response after its head, up to (excluding) the empty line."""
        lines = []
        while True:
            line = self._next_line(command, deadline)
            if not line.strip():
                return lines
            lines.append(line)

    def _read_response(self, command: str, timeout: float) -> list[str]:
        """Read one response: its lines up to (excluding) the empty line."""
        deadline = _Deadline(timeout)
        first = self._read_head(command, deadline)
        return [first, *self._read_body(command, deadline)]

    def _split_head(self, command: str, head: str) -> str:
        """The text of a status line after its ``=``/``?``, id and one space."""
        rest = head[1:]
        digits = len(rest) - len(rest.lstrip("0123456789"))
        rest = rest[digits:]
        if rest and not rest[0].isspace():
            self._fail(f"malformed answer to {command!r}: {head!r}", command)
        return rest[1:] if rest else rest

    def _parse_response(self, command: str, lines: list[str]) -> str:
        status = lines[0][0]
        rest = self._split_head(command, lines[0])
        body = lines[1:]
        if not rest.strip() and body:
            text = "\n".join(body)
        else:
            text = "\n".join([rest, *body])
        text = text.rstrip()
        if status == "?":
            raise GtpClientError(text, command, failed=True)
        return text

    def _fail(self, message: str, command: str) -> NoReturn:
        """Close the client (the stream is unusable), kill the engine and raise."""
        log.warning("GTP engine %s: %s", self.argv[0] if self.argv else "?", message)
        self._shutdown(0.0)
        raise GtpClientError(message, command)

    def _shutdown(self, timeout: float) -> None:
        """Close the engine's stdin, wait up to *timeout* s for it to exit, then kill."""
        self._closed = True
        self._streaming = None
        self._stream_pending.clear()
        proc = self._proc
        if proc.stdin is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            try:
                proc.wait(timeout=max(timeout, 1.0))
            except subprocess.TimeoutExpired:  # pragma: no cover
                log.error("engine pid %d did not die", proc.pid)
        self._reader.join(timeout=max(timeout, 0.5))
        if proc.stdout is not None and not self._reader.is_alive():
            proc.stdout.close()
