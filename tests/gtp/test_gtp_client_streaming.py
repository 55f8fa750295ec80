"""GtpClient's streaming API (stream, read_stream_line, stream_lines,
stop_stream) against subprocess engines: the stub's ``stream`` mode and
gtp.server itself serving a streaming command."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gtp import GtpClient, GtpClientError

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
STUB = str(HERE / "gtp_stub_engine.py")


def stub(timeout: float = 5.0) -> GtpClient:
    return GtpClient([sys.executable, STUB, "stream"], timeout=timeout)


def numbers(lines: list[str]) -> list[int]:
    assert all(line.startswith("info ") for line in lines), lines
    return [int(line.split()[1]) for line in lines]


def read_until_end(client: GtpClient, timeout: float = 5.0) -> list[str]:
    """Lines of a stream that ends by itself, up to its end."""
    deadline = time.monotonic() + timeout
    lines = []
    while client.streaming and time.monotonic() < deadline:
        lines += client.stream_lines(0.1)
    assert client.streaming is None, lines
    return lines


def test_stream_and_stop() -> None:
    with stub() as client:
        assert client.streaming is None
        assert client.stream("analyze") is None
        assert client.streaming == "analyze"
        assert client.read_stream_line(2.0) == "info 0"
        time.sleep(0.1)
        got = client.stream_lines()                # what arrived, without waiting
        assert got
        got += client.stream_lines(2.0)
        rest = client.stop_stream()
        assert client.streaming is None
        assert numbers(["info 0", *got, *rest]) == list(range(1 + len(got) + len(rest)))
        assert client.stop_stream() == []          # nothing open: nothing sent
        assert client.send("name") == "name"
        client.stream("analyze")                   # a second stream after the first
        assert client.read_stream_line(2.0) == "info 0"
        assert numbers(client.stop_stream())[:1] in ([], [1])
        assert client.send("still there") == "still there"
    assert client.returncode == 0


def test_no_line_yet_is_none_and_keeps_the_stream() -> None:
    with stub() as client:
        client.stream("quiet")
        start = time.monotonic()
        assert client.read_stream_line() is None
        assert client.read_stream_line(0.2) is None
        assert client.stream_lines(0.2) == []
        assert 0.35 <= time.monotonic() - start < 2.0
        assert client.streaming == "quiet" and client.alive
        assert client.stop_stream() == []
        assert client.send("name") == "name"


def test_reading_with_no_stream_open() -> None:
    with stub() as client:
        with pytest.raises(RuntimeError, match="^no stream is open$"):
            client.read_stream_line()
        client.stream("count 0")                   # "=", "play D4", its end
        assert client.read_stream_line(2.0) == "play D4"
        assert client.read_stream_line(2.0) is None     # the end
        assert client.streaming is None
        with pytest.raises(RuntimeError, match="^no stream is open$"):
            client.stream_lines()


def test_head_with_id_and_text() -> None:
    with stub() as client:
        client.stream("7 analyze")                 # "=7"
        assert client.read_stream_line(2.0) == "info 0"
        client.stop_stream()
        client.stream("inline")                    # "= info 0"
        assert client.read_stream_line() == "info 0"
        assert numbers(client.stop_stream())[:1] in ([], [1])
        client.stream("inline")
        assert numbers(client.stop_stream())[0] == 0    # a pending line comes back too


def test_stream_that_ends_by_itself() -> None:
    with stub() as client:
        client.stream("count 3")
        assert read_until_end(client) == ["info 0", "info 1", "info 2", "play D4"]
        assert client.stop_stream() == []
        assert client.send("name") == "name"


def test_failure_answer_to_a_stream_command() -> None:
    with stub() as client:
        with pytest.raises(GtpClientError) as info:
            client.stream("analyze bad")
        assert str(info.value) == "cannot analyze"
        assert info.value.failed and info.value.command == "analyze bad"
        assert client.streaming is None and client.alive
        assert client.send("name") == "name"
        client.stream("analyze")
        assert client.read_stream_line(2.0) == "info 0"


def test_engine_dying_mid_stream() -> None:
    client = stub()
    client.stream("die")                           # "=", info 0, info 1, exit 5
    assert client.read_stream_line(2.0) == "info 0"
    assert client.read_stream_line(2.0) == "info 1"
    with pytest.raises(GtpClientError) as info:
        client.read_stream_line(2.0)
    assert str(info.value) == "engine exited with status 5 while answering 'die'"
    assert not info.value.failed and info.value.command == "die"
    assert not client.alive and client.streaming is None
    assert client.returncode == 5
    with pytest.raises(GtpClientError, match="^client is closed$"):
        client.read_stream_line()
    with pytest.raises(GtpClientError, match="^client is closed$"):
        client.send("name")
    assert client.stop_stream() == []
    client.close()


def test_engine_dying_while_stream_lines_reads() -> None:
    client = stub()
    client.stream("die")
    with pytest.raises(GtpClientError, match="^engine exited with status 5 while answering 'die'$"):
        for _ in range(100):
            client.stream_lines(0.05)
    assert not client.alive and client.streaming is None
    client.close()


def test_engine_dying_before_stop_stream() -> None:
    client = stub()
    client.stream("die")
    client._proc.wait(timeout=5)
    with pytest.raises(GtpClientError, match="^engine exited with status 5") as info:
        client.stop_stream()
    assert info.value.command == "die" and not info.value.failed
    assert not client.alive and client.streaming is None
    client.close()


def test_send_during_a_stream_raises_and_keeps_the_stream() -> None:
    with stub() as client:
        client.stream("analyze")
        assert client.read_stream_line(2.0) == "info 0"
        with pytest.raises(RuntimeError, match=r"cannot send 'name' while 'analyze' is "
                                               r"streaming: call stop_stream\(\) first"):
            client.send("name")
        with pytest.raises(RuntimeError, match="while 'analyze' is streaming"):
            client.stream("analyze")
        with pytest.raises(ValueError):            # a bad command is still a ValueError
            client.send("a\nb")
        assert client.streaming == "analyze" and client.alive
        lines = ["info 0", *client.stream_lines(2.0), *client.stop_stream()]
        assert numbers(lines) == list(range(len(lines)))    # nothing was lost or sent
        assert client.send("name") == "name"


def test_stop_stream_times_out_on_an_engine_that_does_not_stop() -> None:
    client = stub(timeout=5.0)
    client.stream("deaf")
    start = time.monotonic()
    with pytest.raises(GtpClientError, match=r"^timeout: no answer to 'deaf' within 0.3 s$"):
        client.stop_stream(timeout=0.3)
    assert time.monotonic() - start < 2.0
    assert not client.alive and client.streaming is None
    client.close()


def test_close_stops_an_open_stream() -> None:
    client = stub()
    client.stream("analyze")
    assert client.read_stream_line(2.0) == "info 0"
    client.close()
    assert client.returncode == 0                  # stopped, then quit
    assert client.streaming is None
    client.close()


SERVED = textwrap.dedent('''
    """gtp.server with FakePlayer and two streaming commands."""
    from gtp import GtpError, SYNTAX_ERROR, serve, standard_registry
    from gtp_fakes import FakePlayer

    def tick(args):
        if args:
            raise GtpError(SYNTAX_ERROR)

        def run(stream):
            n = 0
            while not stream.wait(0.005):
                stream.write(f"tick {n}")
                n += 1

        return run

    def count(args):
        def run(stream):
            for n in range(int(args[0])):
                stream.write(f"tick {n}")
            return "play D4"

        return run

    registry = standard_registry(FakePlayer())
    registry.add("tick", tick, raw=True, streaming=True)
    registry.add("count", count, raw=True, streaming=True, interruptible=False)
    serve(registry)
''')


def test_against_gtp_server(tmp_path: Path) -> None:
    script = tmp_path / "served.py"
    script.write_text(SERVED)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), str(HERE),
                                                      env.get("PYTHONPATH")]))
    with GtpClient([sys.executable, str(script)], timeout=10, env=env) as client:
        assert client.send("name") == "FakePlayer"
        with pytest.raises(GtpClientError, match="^syntax error$"):
            client.stream("tick bad")
        client.stream("tick")
        first = client.read_stream_line(5.0)
        assert first == "tick 0"
        lines = [first, *client.stream_lines(1.0), *client.stop_stream()]
        assert lines == [f"tick {n}" for n in range(len(lines))]
        assert client.send("play b C3") == ""
        client.stream("count 2")
        assert read_until_end(client) == ["tick 0", "tick 1", "play D4"]
        client.stream("tick")
        with pytest.raises(RuntimeError):
            client.send("name")
        assert client.read_stream_line(5.0) == "tick 0"
    assert client.returncode == 0
