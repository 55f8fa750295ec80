"""The GTP command loop, with streaming commands and background work.

:func:`serve` reads commands, dispatches them through a
:class:`~gtp.registry.Registry` and writes exactly one response per command.
Only GTP goes to *out*; diagnostics go through :mod:`logging` (configure it
to write to stderr).

Input is read by a reader thread as it arrives, so that the engine hears
new input while it works (commands are still answered one by one, in
order):

* a *streaming* command (``lz-analyze``) answers ``=`` at once and runs in a
  background thread, writing lines, until the next input line arrives (of
  any kind, even a blank one); its response is then closed with the usual
  empty line before that next line is handled.  A non-interruptible one
  (``lz-genmove_analyze``) runs to its end first;
* a ``quit`` line that directly follows the command being run (a long
  ``genmove``; blank and comment lines in between do not count) makes the
  server call the registry's interrupt hook until that command returns, so
  the session ends promptly; GoGui's ``# interrupt`` line does the same
  without ending the session.  The rule depends only on the order of the
  lines, not on when they arrive, so a script gives the same answers
  however it is fed.  End of input never interrupts a command (a piped
  script gets full-strength answers), but it does stop streaming and
  background work;
* after each answered command the registry's idle hook may hand over
  background work (pondering), stopped as soon as the next line arrives.

The reader never reads past ``quit`` (unless that quit fails): what follows
it is left unread.

Two options serve a process whose controller may vanish or whose engine may
misbehave (``python -m engine.gtp`` sets both):

* ``end_of_input_stops=True``: end of input means the controller is gone.
  The command running then and every line still to answer are cut short
  with the interrupt hook (a search answers the move it has), so the
  session ends within moments instead of finishing the work at full
  strength;
* ``on_ending``: called once, from any thread, when the session starts to
  end: at end of input (with ``end_of_input_stops``), when a ``quit`` is
  answered, or when one cuts short the command it directly follows.  A
  watchdog there can end a process whose command does not return.

A third, ``grace``, softens the cut for scripts: a command cut short by
the session's end (a ``quit`` right after it, or end of input with
``end_of_input_stops``) is first left to run until ``grace`` seconds after
it started, so that ``genmove b`` then ``quit`` piped into an engine gets a
move searched for that long, not the first simulation's.  The commands cut
short by one end of input share one such window, counted from the end of
input at the latest, so the session still ends within ``grace`` seconds
(plus the command's stop) of it.  GoGui's ``# interrupt`` gets no grace:
the user asked for the move now.

Whatever the options, background work that was asked to stop and is still
running after :data:`ABANDON_SECONDS` is abandoned (its thread is left to
itself, an error is logged, and its response is closed) so that the
session goes on.
"""

from __future__ import annotations

import logging
import queue
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TextIO

from .protocol import format_response, parse, preprocess
from .registry import Registry, Runner, Stream

__all__ = ["serve"]

log = logging.getLogger(__name__)

INTERRUPT_LINE = "# interrupt"
"""GoGui's interrupt request: a comment line sent while a command runs."""

POKE_SECONDS = 0.05
"""How often a command or task that was asked to stop is asked again."""

ABANDON_SECONDS = 1.0
"""How long background work asked to stop may take before it is abandoned
(a search stops within milliseconds: only a bug keeps it longer)."""


def serve(registry: Registry, inp: TextIO | None = None, out: TextIO | None = None, *,
          end_of_input_stops: bool = False, on_ending: Callable[[], None] | None = None,
          grace: float = 0.0) -> None:
    """Answer GTP commands from *inp* on *out* until ``quit`` or end of input.

    *inp* and *out* default to ``sys.stdin`` and ``sys.stdout`` (looked up at
    call time; undecodable input bytes are then replaced rather than fatal).
    Blank and comment lines get no response; every other line gets exactly
    one, flushed at once.  A command registered with ``ends_session`` (the
    standard ``quit``) is answered and then the loop returns, leaving any
    further input unread.  A closed output pipe also ends the loop quietly.
    Streaming commands, background work and the three options are
    described in the module documentation.
    """
    if inp is None:
        inp = sys.stdin
        _tolerate_bad_bytes(inp)
    if out is None:
        out = sys.stdout
    _Session(registry, inp, out, end_of_input_stops, on_ending, grace).run()


class _Task:
    """A streaming command or idle work running in its own thread."""

    def __init__(self, runner: Runner, stream: Stream, seq: int | None,
                 streaming: bool, interruptible: bool) -> None:
        self.runner = runner
        self.stream = stream
        self.seq = seq                      # sequence number of its command line
        self.streaming = streaming          # False: idle work, no response of its own
        self.interruptible = interruptible
        self.final: str | None = None
        self.thread: threading.Thread | None = None
        self.started = time.monotonic()


class _Reader:
    """Reads *inp* in a daemon thread, as far ahead as input comes, except
    past a ``quit`` line: after one it waits for :meth:`resume` (the quit
    failed) or :meth:`close`, so that what follows a quit stays unread.

    Each line goes to *events* as ``("line", raw, seq)`` (``raw`` is ``""``
    at end of input) after *on_line* has seen it in the reader thread.
    *seq* numbers the lines that count (commands and GoGui's interrupt
    line: not blank or comment lines) 1, 2, ...; ``None`` for the others.
    """

    def __init__(self, inp: TextIO, events: queue.Queue, on_line, is_quit) -> None:
        self._inp = inp
        self._events = events
        self._on_line = on_line
        self._is_quit = is_quit
        self._go = threading.Semaphore(0)
        self._closed = False
        self._seq = 0
        self._thread = threading.Thread(target=self._run, name="gtp-reader", daemon=True)
        self._thread.start()

    def resume(self) -> None:
        """Read on after a quit line that did not end the session."""
        self._go.release()

    def close(self) -> None:
        """Read nothing more (a read in progress is left to the daemon thread)."""
        self._closed = True
        self._go.release()

    def _run(self) -> None:
        while not self._closed:
            try:
                raw = self._inp.readline()
            except (OSError, ValueError) as exc:   # closed or broken input
                log.info("input failed: %s", exc)
                raw = ""
            seq = None
            if raw and (preprocess(raw) is not None or _is_interrupt_line(raw)):
                self._seq += 1
                seq = self._seq
            self._on_line(raw, seq)
            self._events.put(("line", raw, seq))
            if not raw:
                return
            if self._is_quit(raw):
                self._go.acquire()


class _Session:
    def __init__(self, registry: Registry, inp: TextIO, out: TextIO,
                 end_of_input_stops: bool = False,
                 on_ending: Callable[[], None] | None = None,
                 grace: float = 0.0) -> None:
        self.registry = registry
        self.end_of_input_stops = end_of_input_stops
        self.grace = grace
        self._on_ending = on_ending
        self._ending = False                # on_ending was called
        self._input_ended = False           # end of input read (with end_of_input_stops)
        self._ended_at: float | None = None  # when it was read
        self.out = out
        self.events: queue.Queue = queue.Queue()
        self.out_lock = threading.Lock()
        self.closed = False                 # output pipe closed
        self.task: _Task | None = None
        self.pending: deque[tuple[str, int | None]] = deque()  # read, not handled yet
        # Interrupts: a quit or "# interrupt" line cuts short the command it
        # directly follows (sequence numbers one apart), whichever of the two
        # the server sees first.
        self._lock = threading.Lock()
        self._running: int | None = None    # seq of the command running in the main thread
        self._started = 0.0                 # when it started
        self._stops: dict[int, bool] = {}   # seqs of the quit / interrupt lines read: is it a quit
        self.reader = _Reader(inp, self.events, self._on_line, self._is_quit)

    # -- main loop ------------------------------------------------------------

    def run(self) -> None:
        try:
            while True:
                # lines already read, in order; an interruptible task (analysis,
                # pondering) gives way to them, a non-interruptible one is awaited
                while self.pending:
                    task = self.task
                    if task is not None:
                        if not task.interruptible:
                            break
                        task.stream.stop()
                        self._finish_task()
                        if self.closed:
                            return
                    if not self._handle(*self.pending.popleft()):
                        return
                event = self.events.get()
                if event[0] == "done":
                    task = event[1]
                    if task is self.task:
                        self._finish_task()
                        if self.closed:
                            return
                        if task.streaming:      # idle work that ended by itself is not restarted
                            self._maybe_idle()
                    continue
                _, raw, seq = event
                task = self.task
                stop = None if task is None else self._stop_line(seq, task.seq)
                if task is not None and not task.interruptible and (
                        not raw or stop is not None):
                    if stop:
                        self._ending_now()
                    if stop or (not raw and self.end_of_input_stops):
                        # the session's end: the task's grace first
                        task.thread.join(max(0.0, self._grace_deadline(task.started)
                                             - time.monotonic()))
                    task.stream.stop()          # end of input, or quit / "# interrupt" after it
                    self._finish_task()
                    if self.closed:
                        return
                self.pending.append((raw, seq))
        finally:
            if self.task is not None:
                self.task.stream.stop()
                self._finish_task()
            self.reader.close()

    def _handle(self, raw: str, seq: int | None) -> bool:
        """Answer one input line; False ends the session."""
        if not raw:
            log.debug("end of input")
            return False
        line = preprocess(raw)
        if line is None:
            return True
        cmd = parse(line)
        log.debug("<< %s", line)
        entry = self.registry.get(cmd.name)
        if entry is not None and entry.streaming:
            return self._start_streaming(cmd, seq, entry.interruptible)
        with self._lock:
            self._running = seq
            self._started = time.monotonic()
            after = None if seq is None else self._stops.get(seq + 1)
            stopped = after is not None or self._input_ended
        if stopped:         # the quit (or end of input) came in before the command started
            self._start_interrupter(seq, grace=after is not False)
        try:
            response = self.registry.execute(cmd)
        finally:
            with self._lock:
                self._running = None
        if response.quit:
            self._ending_now()
        if not self._write(format_response(cmd.id, response.ok, response.text)):
            return False
        if response.quit:
            return False
        if entry is not None and entry.ends_session:    # a quit with bad arguments
            self.reader.resume()
        self._maybe_idle()
        return True

    # -- streaming and idle tasks ----------------------------------------------

    def _start_streaming(self, cmd, seq: int | None, interruptible: bool) -> bool:
        failure, runner = self.registry.prepare(cmd)
        if failure is not None:
            return self._write(format_response(cmd.id, failure.ok, failure.text))
        head = "=" + ("" if cmd.id is None else str(cmd.id)) + "\n"
        if not self._write(head):
            return False
        stream: Stream

        def write_line(line: str) -> None:
            if not self._write(line + "\n"):
                stream.stop()           # output closed: the runner should end

        stream = Stream(write_line)
        self._start(_Task(runner, stream, seq, True, interruptible))
        return True

    def _maybe_idle(self) -> None:
        if self.task is not None or self.pending or not self.events.empty():
            return
        runner = self.registry.idle_task()
        if runner is not None:
            self._start(_Task(runner, Stream(_discard), None, False, True))

    def _start(self, task: _Task) -> None:
        def body() -> None:
            try:
                task.final = task.runner(task.stream)
            except Exception:  # noqa: BLE001 - the session must survive a runner bug
                log.exception("background command failed")
            finally:
                self.events.put(("done", task))

        task.thread = threading.Thread(target=body, name="gtp-task", daemon=True)
        self.task = task
        task.thread.start()

    def _finish_task(self) -> None:
        """Wait for the current task (asking it again and again to stop if it
        was asked once) and close its response."""
        task, self.task = self.task, None
        if task is None or task.thread is None:
            return
        give_up = None
        while task.thread.is_alive():
            task.stream.poke()
            task.thread.join(POKE_SECONDS)
            if task.stream.stopped:
                now = time.monotonic()
                give_up = give_up or now + ABANDON_SECONDS
                if now >= give_up and task.thread.is_alive():
                    log.error("background work (%s) did not stop within %.1f s of the request:"
                              " abandoned, its thread left running", task.thread.name,
                              ABANDON_SECONDS)
                    break
        if not task.streaming:
            return
        text = "" if task.final is None else str(task.final)
        tail = "".join(ln.rstrip() + "\n" for ln in text.splitlines() if ln.strip())
        self._write(tail + "\n")

    # -- interrupts (reader thread) ----------------------------------------------

    def _on_line(self, raw: str, seq: int | None) -> None:
        """Seen by the reader thread as soon as a line is read: a ``quit`` or
        ``# interrupt`` line cuts short the command it directly follows, end
        of input (with end_of_input_stops) the command running and all
        after it."""
        if not raw and self.end_of_input_stops:
            with self._lock:
                self._input_ended = True
                self._ended_at = time.monotonic()
                running = self._running
            self._ending_now()
            if running is not None:
                self._start_interrupter(running, grace=True)
            return
        if seq is None or not _stops_anything(raw, self.registry):
            return
        quit_line = _is_good_quit(raw, self.registry)
        with self._lock:
            self._stops[seq] = quit_line
            running = self._running
        if running is not None and running + 1 == seq:
            if quit_line:
                self._ending_now()
            self._interrupt_while_running(running, grace=quit_line)

    def _ending_now(self) -> None:
        """Tell on_ending, once, that the session is ending."""
        with self._lock:
            if self._ending or self._on_ending is None:
                return
            self._ending = True
        try:
            self._on_ending()
        except Exception:  # noqa: BLE001 - a hook must not stop the session
            log.exception("on_ending hook failed")

    def _stop_line(self, seq: int | None, command_seq: int | None) -> bool | None:
        """Whether line *seq*, read right after command *command_seq*, is a
        stop, as the reader found: True a quit, False GoGui's interrupt
        line; None when it is neither or does not follow the command."""
        with self._lock:
            if seq is None or command_seq is None or seq != command_seq + 1:
                return None
            return self._stops.get(seq)

    def _grace_deadline(self, started: float) -> float:
        """When a command that started at *started* and is cut short by the
        session's end is first interrupted: ``grace`` after its start, and
        after the end of input at the latest."""
        deadline = started + self.grace
        if self._ended_at is not None:
            deadline = min(deadline, self._ended_at + self.grace)
        return deadline

    def _start_interrupter(self, seq: int, grace: bool) -> None:
        threading.Thread(target=self._interrupt_while_running, args=(seq, grace),
                         daemon=True).start()

    def _interrupt_while_running(self, seq: int, grace: bool) -> None:
        """Call the interrupt hook until command *seq* returns (a search that
        was about to start when first asked must be asked again); with
        *grace* (the session's end) not before the command's grace is over."""
        while True:
            with self._lock:
                if self._running != seq:
                    return
                wait = self._grace_deadline(self._started) - time.monotonic() if grace else 0.0
            if wait > 0:
                time.sleep(min(wait, POKE_SECONDS))
                continue
            self.registry.interrupt()
            time.sleep(POKE_SECONDS)

    def _is_quit(self, raw: str) -> bool:
        line = preprocess(raw)
        entry = None if line is None else self.registry.get(parse(line).name)
        return entry is not None and entry.ends_session

    # -- output ----------------------------------------------------------------

    def _write(self, text: str) -> bool:
        with self.out_lock:
            if self.closed:
                return False
            log.debug(">> %s", text.rstrip("\n"))
            try:
                self.out.write(text)
                self.out.flush()
            except (BrokenPipeError, ValueError):   # ValueError: closed file
                log.info("output closed; stopping")
                self.closed = True
                return False
        return True


def _discard(line: str) -> None:
    log.debug("idle output dropped: %s", line)


def _is_interrupt_line(raw: str) -> bool:
    return raw.strip() == INTERRUPT_LINE


def _stops_anything(raw: str, registry: Registry) -> bool:
    """``quit`` (any command that ends the session) or GoGui's interrupt line."""
    if _is_interrupt_line(raw):
        return True
    line = preprocess(raw)
    if line is None:
        return False
    entry = registry.get(parse(line).name)
    return entry is not None and entry.ends_session


def _is_good_quit(raw: str, registry: Registry) -> bool:
    """A command that ends the session, with arguments it accepts (a
    ``quit`` with bad ones is answered ``?`` and the session goes on)."""
    line = preprocess(raw)
    if line is None:
        return False
    cmd = parse(line)
    entry = registry.get(cmd.name)
    if entry is None or not entry.ends_session:
        return False
    try:
        entry.convert_args(cmd.args, registry.board_size)
    except Exception:  # noqa: BLE001 - GtpError or a converter's failure: not a good quit
        return False
    return True


def _tolerate_bad_bytes(stream: TextIO) -> None:
    """Make a standard text stream replace undecodable bytes instead of
    raising, and end lines at LF only: a CR is a control character that
    preprocessing removes (GTP section 2.5), not a line end of its own."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="replace", newline="\n")
        except (ValueError, OSError):  # pragma: no cover - e.g. already read from
            pass
