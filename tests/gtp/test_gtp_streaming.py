"""The server's streaming commands, interrupts and background work (gtp only).

A pipe feeds the server line by line from the test, so that input can arrive
while a command runs, as it does from a GUI.
"""

from __future__ import annotations

import io
import os
import threading
import time

import pytest
from gtp_fakes import FakePlayer

from gtp import Command, GtpError, Registry, serve, standard_registry
from gtp.registry import Stream
from gtp.protocol import SYNTAX_ERROR


class Wire:
    """serve() in a thread, fed through a pipe; the output is captured."""

    def __init__(self, registry: Registry) -> None:
        r, w = os.pipe()
        self._in = os.fdopen(w, "w", buffering=1)
        self.out = _SyncOut()
        self.thread = threading.Thread(target=serve, args=(registry, os.fdopen(r), self.out),
                                       daemon=True)
        self.thread.start()

    def send(self, text: str) -> None:
        self._in.write(text)
        self._in.flush()

    def close(self) -> None:
        self._in.close()

    def wait_for(self, predicate, timeout: float = 5.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.out.text()
            if predicate(text):
                return text
            time.sleep(0.005)
        raise AssertionError(f"timed out; output so far: {self.out.text()!r}")

    def finish(self, timeout: float = 5.0) -> str:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"server still running; output {self.out.text()!r}"
        return self.out.text()


class _SyncOut(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()

    def write(self, s: str) -> int:
        with self._lock:
            return super().write(s)

    def text(self) -> str:
        with self._lock:
            return self.getvalue()


def ticker(interval: float = 0.01, final: str | None = None):
    """A streaming handler writing "tick N" every *interval* until stopped."""

    def handler(args: list[str]):
        if args and args[0] == "bad":
            raise GtpError(SYNTAX_ERROR)

        def run(stream: Stream) -> str | None:
            n = 0
            while not stream.wait(interval):
                stream.write(f"tick {n}")
                n += 1
            return final

        return run

    return handler


def counter_registry() -> Registry:
    reg = standard_registry(FakePlayer())
    reg.add("tick", ticker(), raw=True, streaming=True)
    return reg


# -- streaming ----------------------------------------------------------------


def test_streaming_command_runs_until_the_next_line() -> None:
    wire = Wire(counter_registry())
    wire.send("tick\n")
    wire.wait_for(lambda t: t.count("tick ") >= 3)
    wire.send("name\n")
    wire.wait_for(lambda t: t.endswith("= FakePlayer\n\n"))
    wire.send("quit\n")
    text = wire.finish()
    head, rest = text.split("\n", 1)
    assert head == "="
    analysis, after = rest.split("\n\n", 1)
    lines = analysis.split("\n")
    assert lines == [f"tick {i}" for i in range(len(lines))]
    assert after == "= FakePlayer\n\n=\n\n"


def test_streaming_command_with_id_and_bad_arguments() -> None:
    wire = Wire(counter_registry())
    wire.send("7 tick bad\n")
    wire.wait_for(lambda t: t.endswith("\n\n"))
    wire.send("8 tick\n")
    wire.wait_for(lambda t: "tick 0" in t)
    wire.send("9 name\nquit\n")
    text = wire.finish()
    assert text.startswith("?7 syntax error\n\n=8\ntick 0\n")
    assert text.endswith("\n\n=9 FakePlayer\n\n=\n\n")


@pytest.mark.parametrize("line", ["\n", "# comment\n", "frobnicate\n"])
def test_any_line_stops_a_stream(line: str) -> None:
    wire = Wire(counter_registry())
    wire.send("tick\n")
    wire.wait_for(lambda t: "tick 1" in t)
    wire.send(line)
    wire.send("name\nquit\n")
    text = wire.finish()
    body = text.split("=\n", 1)[1]
    stream, rest = body.split("\n\n", 1)
    assert all(ln.startswith("tick ") for ln in stream.split("\n"))
    expected = "= FakePlayer\n\n=\n\n"
    if line.startswith("frob"):
        expected = "? unknown command\n\n" + expected
    assert rest == expected


def test_end_of_input_stops_a_stream() -> None:
    wire = Wire(counter_registry())
    wire.send("tick\n")
    wire.wait_for(lambda t: "tick 0" in t)
    wire.close()
    text = wire.finish()
    assert text.startswith("=\ntick 0\n") and text.endswith("\n\n")


def test_quit_during_a_stream_ends_the_session_promptly() -> None:
    wire = Wire(counter_registry())
    wire.send("tick\n")
    wire.wait_for(lambda t: "tick 0" in t)
    t0 = time.monotonic()
    wire.send("quit\nname\n")
    text = wire.finish()
    assert time.monotonic() - t0 < 1.0
    assert text.endswith("\n\n=\n\n")
    assert "FakePlayer" not in text


def test_non_interruptible_stream_runs_to_its_end_then_answers_the_held_line() -> None:
    reg = counter_registry()
    gate = threading.Event()

    def handler(args: list[str]):
        def run(stream: Stream) -> str:
            stream.write("info working")
            gate.wait(5)
            stream.write("info done")
            return "play D4"
        return run

    reg.add("genmove_stream", handler, raw=True, streaming=True, interruptible=False)
    wire = Wire(reg)
    wire.send("genmove_stream\n")
    wire.wait_for(lambda t: "working" in t)
    wire.send("name\n")
    time.sleep(0.1)
    assert "FakePlayer" not in wire.out.text()      # held until the command is done
    gate.set()
    wire.wait_for(lambda t: t.endswith("= FakePlayer\n\n"))
    wire.send("quit\n")
    assert wire.finish() == "=\ninfo working\ninfo done\nplay D4\n\n= FakePlayer\n\n=\n\n"


def test_quit_stops_a_non_interruptible_stream() -> None:
    reg = counter_registry()
    stopped = []

    def handler(args: list[str]):
        def run(stream: Stream) -> str:
            stream.on_stop(lambda: stopped.append(True))
            stream.write("info working")
            stream.wait(10)
            return "play pass"
        return run

    reg.add("genmove_stream", handler, raw=True, streaming=True, interruptible=False)
    wire = Wire(reg)
    wire.send("genmove_stream\n")
    wire.wait_for(lambda t: "working" in t)
    t0 = time.monotonic()
    wire.send("quit\n")
    assert wire.finish() == "=\ninfo working\nplay pass\n\n=\n\n"
    assert time.monotonic() - t0 < 1.0 and stopped


# -- interrupts of ordinary commands ------------------------------------------


def slow_registry(limit: float = 10):
    """"slow" runs until interrupted (or *limit* seconds); the interrupt hook
    counts calls."""
    reg = standard_registry(FakePlayer())
    stop = threading.Event()
    calls = []

    def slow() -> str:
        stop.clear()
        return "interrupted" if stop.wait(limit) else "finished"

    def interrupt() -> None:
        calls.append(time.monotonic())
        stop.set()

    reg.add("slow", slow)
    reg.set_interrupt(interrupt)
    return reg, calls


def test_quit_interrupts_a_running_command() -> None:
    reg, calls = slow_registry()
    wire = Wire(reg)
    wire.send("slow\n")
    time.sleep(0.1)
    t0 = time.monotonic()
    wire.send("quit\nname\n")
    assert wire.finish() == "= interrupted\n\n=\n\n"
    assert calls and time.monotonic() - t0 < 1.0


def test_gogui_interrupt_line_interrupts_without_ending_the_session() -> None:
    reg, calls = slow_registry()
    wire = Wire(reg)
    wire.send("slow\n")
    time.sleep(0.1)
    wire.send("# interrupt\n")
    wire.wait_for(lambda t: t.endswith("= interrupted\n\n"))
    wire.send("name\nquit\n")
    assert wire.finish() == "= interrupted\n\n= FakePlayer\n\n=\n\n"
    assert calls


def test_only_a_quit_right_after_a_command_interrupts_it() -> None:
    """Other input does not interrupt, and a quit behind another command
    waits its turn: the answers depend on the order of the lines only."""
    reg, calls = slow_registry(limit=1.0)
    wire = Wire(reg)
    wire.send("slow\nname\n")
    time.sleep(0.3)
    assert wire.out.text() == ""
    wire.send("# a comment\nquit\n")
    assert wire.finish() == "= finished\n\n= FakePlayer\n\n=\n\n"   # (quit did interrupt name)
    reg, calls = slow_registry()
    out = io.StringIO()
    serve(reg, io.StringIO("slow\n\n# comment\nquit\n"), out)      # in one piece
    assert out.getvalue() == "= interrupted\n\n=\n\n" and calls


def test_end_of_input_does_not_interrupt_a_piped_script() -> None:
    reg = standard_registry(FakePlayer())
    reg.set_interrupt(lambda: pytest.fail("interrupted by end of input"))
    reg.add("sleepy", lambda: time.sleep(0.2) or "rested")
    out = io.StringIO()
    serve(reg, io.StringIO("sleepy\n"), out)
    assert out.getvalue() == "= rested\n\n"


def test_a_command_cut_short_by_a_piped_quit_first_gets_its_grace() -> None:
    """``slow`` then ``quit`` in one piece: the quit cuts ``slow`` short,
    but only ``grace`` seconds after it started."""
    reg, calls = slow_registry()
    out = io.StringIO()
    t0 = time.monotonic()
    serve(reg, io.StringIO("slow\nquit\n"), out, grace=0.5)
    assert out.getvalue() == "= interrupted\n\n=\n\n"
    assert 0.5 <= calls[0] - t0 < 0.9


def test_a_command_that_ends_within_its_grace_is_not_interrupted() -> None:
    reg, calls = slow_registry(limit=0.2)
    out = io.StringIO()
    serve(reg, io.StringIO("slow\nquit\n"), out, grace=0.5)
    assert out.getvalue() == "= finished\n\n=\n\n" and not calls


def test_commands_cut_short_by_end_of_input_share_one_grace() -> None:
    """With end_of_input_stops, every command after the end of input is cut
    short, all within one grace counted from the end of input."""
    reg, calls = slow_registry()
    out = io.StringIO()
    t0 = time.monotonic()
    serve(reg, io.StringIO("slow\nslow\nslow\n"), out, end_of_input_stops=True, grace=0.5)
    assert out.getvalue() == "= interrupted\n\n" * 3
    assert 0.5 <= calls[0] - t0 and time.monotonic() - t0 < 0.9


def test_gogui_interrupt_line_gets_no_grace() -> None:
    reg, calls = slow_registry()
    wire_in = io.StringIO("slow\n# interrupt\nquit\n")
    out = io.StringIO()
    t0 = time.monotonic()
    serve(reg, wire_in, out, grace=5.0)
    assert out.getvalue() == "= interrupted\n\n=\n\n"
    assert calls[0] - t0 < 0.5


def test_a_non_interruptible_stream_cut_short_by_quit_first_gets_its_grace() -> None:
    reg = counter_registry()

    def handler(args: list[str]):
        def run(stream: Stream) -> str:
            started = time.monotonic()
            stream.wait(10)
            return f"ran {time.monotonic() - started:.2f}"
        return run

    reg.add("genmove_stream", handler, raw=True, streaming=True, interruptible=False)
    out = io.StringIO()
    serve(reg, io.StringIO("genmove_stream\nquit\n"), out, grace=0.5)
    head, ran, tail = out.getvalue().partition("ran ")
    assert head == "=\n" and tail.endswith("\n\n=\n\n"), out.getvalue()
    assert 0.5 <= float(tail.split()[0]) < 0.9, out.getvalue()


def test_the_interrupt_hook_is_repeated_until_the_command_returns() -> None:
    """An interrupt that comes before the work listens (a search about to
    start) must not be lost: the server asks again."""
    reg = standard_registry(FakePlayer())
    stop = threading.Event()
    calls = []

    def late_listener() -> str:
        time.sleep(0.2)
        stop.clear()                 # like Search.run clearing its stop signal
        return "stopped" if stop.wait(10) else "finished"

    reg.add("late", late_listener)
    reg.set_interrupt(lambda: (calls.append(1), stop.set()))
    out = io.StringIO()
    t0 = time.monotonic()
    serve(reg, io.StringIO("late\nquit\n"), out)
    assert out.getvalue() == "= stopped\n\n=\n\n"
    assert len(calls) >= 2 and time.monotonic() - t0 < 2


# -- idle work (pondering) ----------------------------------------------------


def test_idle_work_runs_between_commands_and_stops_on_input() -> None:
    reg = standard_registry(FakePlayer())
    runs = []

    def idle():
        def ponder(stream: Stream) -> None:
            started = time.monotonic()
            stream.write("this never reaches the output")
            stream.wait(10)
            runs.append(time.monotonic() - started)
        return ponder

    reg.set_idle(idle)
    wire = Wire(reg)
    wire.send("name\n")
    wire.wait_for(lambda t: t.endswith("\n\n"))
    time.sleep(0.2)
    wire.send("version\nquit\n")
    assert wire.finish() == "= FakePlayer\n\n= 0.1\n\n=\n\n"
    assert runs and runs[0] >= 0.15 and all(r < 5 for r in runs)


def test_idle_work_that_ends_by_itself_is_not_restarted() -> None:
    reg = standard_registry(FakePlayer())
    asked = []
    reg.set_idle(lambda: asked.append(1) or (lambda stream: None))
    wire = Wire(reg)
    wire.send("name\n")
    time.sleep(0.3)
    wire.send("quit\n")
    assert wire.finish() == "= FakePlayer\n\n=\n\n"
    assert len(asked) == 1


# -- registry side ------------------------------------------------------------


def test_execute_runs_a_streaming_command_to_its_first_line() -> None:
    reg = counter_registry()
    resp = reg.execute(Command(None, "tick", []))
    assert resp.ok and resp.text == "\ntick 0"
    bad = reg.execute(Command(None, "tick", ["bad"]))
    assert not bad.ok and bad.text == "syntax error"


def test_prepare_reports_unknown_and_bad_commands() -> None:
    reg = counter_registry()
    failure, runner = reg.prepare(Command(None, "nope", []))
    assert runner is None and failure.text == "unknown command"
    failure, runner = reg.prepare(Command(None, "tick", ["bad"]))
    assert runner is None and failure.text == "syntax error"
    failure, runner = reg.prepare(Command(None, "tick", []))
    assert failure is None and callable(runner)


def test_streaming_registration_rules() -> None:
    reg = Registry()
    with pytest.raises(ValueError):
        reg.add("x", lambda: None, streaming=True, ends_session=True)
    reg.add("y", lambda: (lambda stream: None), streaming=True)
    assert reg.get("y").streaming and reg.get("y").interruptible
    assert "y" in reg.names()


def test_stream_basics() -> None:
    lines: list[str] = []
    stream = Stream(lines.append, max_lines=2)
    stream.write("a\n\nb  ")
    assert lines == ["a", "b"] and stream.stopped
    calls = []
    stream.on_stop(lambda: calls.append(1))       # already stopped: called at once
    stream.poke()
    assert calls == [1, 1]
    quiet = Stream()
    remove = quiet.on_stop(lambda: calls.append(2))
    remove()
    quiet.stop()
    assert calls == [1, 1]
    assert quiet.wait(0) is True


def test_output_closed_during_a_stream_ends_the_session() -> None:
    class Closing(io.StringIO):
        def write(self, s: str) -> int:
            if "tick 2" in s:
                raise BrokenPipeError
            return super().write(s)

    r, w = os.pipe()
    out = Closing()
    thread = threading.Thread(target=serve, args=(counter_registry(), os.fdopen(r), out),
                              daemon=True)
    thread.start()
    os.write(w, b"tick\n")
    thread.join(5)
    assert not thread.is_alive()
    assert out.getvalue().startswith("=\ntick 0\ntick 1\n")
    os.close(w)
