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
"""

from __future__ import annotations

import logging
import queue
import subprocess
import threading
import time
from collections.abc import Sequence
from types import TracebackType
from typing import IO, Any, NoReturn

__all__ = ["GtpClient", "GtpClientError"]

log = logging.getLogger(__name__)

_EOF = None  # queue sentinel: the engine closed its stdout


class GtpClientError(Exception):
    """A command sent to the engine did not succeed.

    For a ``?`` answer the message is the engine's error text and
    :attr:`failed` is true; for a timeout, a dead engine or a malformed answer
    the message describes the problem and :attr:`failed` is false.
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

    def send(self, command: str, timeout: float | None = None) -> str:
        """Send one command and return the text of its ``=`` answer.

        The ``=`` (and any id) and the following space are removed, as are
        trailing whitespace and an empty first line (``showboard``), so
        multi-line answers come back as their lines joined by ``\\n``.
        Raises :class:`GtpClientError` on a ``?`` answer (message: the
        error text), a timeout (*timeout* overrides the client's default),
        a dead engine or a malformed answer.
        """
        command = command.strip()
        if not command or "\n" in command or "\r" in command:
            raise ValueError(f"not a single GTP command: {command!r}")
        if self._closed:
            raise GtpClientError("client is closed", command)
        if self._proc.poll() is not None:
            self._fail(f"engine exited with status {self._proc.returncode}", command)
        log.debug("-> %s", command)
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.write(command + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            self._fail(f"engine exited (cannot write {command!r})", command)
        lines = self._read_response(command, self.timeout if timeout is None else timeout)
        log.debug("<- %s", "\\n".join(lines))
        return self._parse_response(command, lines)

    def close(self, timeout: float = 2.0) -> None:
        """Send ``quit``, wait up to *timeout* seconds for the engine to exit,
        kill it otherwise.  Safe to call more than once."""
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

    def _next_line(self, command: str, deadline: float, timeout: float) -> str:
        remaining = deadline - time.monotonic()
        try:
            line = self._lines.get(timeout=max(remaining, 0.0)) if remaining > 0 else self._lines.get_nowait()
        except queue.Empty:
            self._fail(f"timeout: no answer to {command!r} within {timeout:g} s", command)
        if line is _EOF:
            self._lines.put(_EOF)  # keep reporting EOF to later reads
            code = self._proc.poll()
            if code is None:
                try:
                    code = self._proc.wait(timeout=0.5)
                except subprocess.TimeoutExpired:
                    pass
            status = "" if code is None else f" with status {code}"
            self._fail(f"engine exited{status} while answering {command!r}", command)
        return line.rstrip("\r\n")

    def _read_response(self, command: str, timeout: float) -> list[str]:
        """Read one response: its lines up to (excluding) the empty line."""
        deadline = time.monotonic() + timeout
        first = self._next_line(command, deadline, timeout)
        while not first.strip():  # tolerate stray blank lines before an answer
            first = self._next_line(command, deadline, timeout)
        if first[0] not in "=?":
            self._fail(f"malformed answer to {command!r}: {first!r}", command)
        lines = [first]
        while True:
            line = self._next_line(command, deadline, timeout)
            if not line.strip():
                return lines
            lines.append(line)

    def _parse_response(self, command: str, lines: list[str]) -> str:
        head = lines[0]
        status, rest = head[0], head[1:]
        digits = len(rest) - len(rest.lstrip("0123456789"))
        rest = rest[digits:]
        if rest and not rest[0].isspace():
            self._fail(f"malformed answer to {command!r}: {head!r}", command)
        rest = rest[1:] if rest else rest
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
