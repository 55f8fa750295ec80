"""Tests for gtp.client.GtpClient against subprocess engines."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from gtp import GtpClient, GtpClientError

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
FAKE_ENGINE = [sys.executable, str(HERE / "gtp_fakes.py")]
STUB = str(HERE / "gtp_stub_engine.py")


def engine_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def stub(mode: str, timeout: float = 5.0) -> GtpClient:
    return GtpClient([sys.executable, STUB, mode], timeout=timeout)


def test_normal_session_with_served_fake_player() -> None:
    with GtpClient(FAKE_ENGINE, timeout=10, env=engine_env()) as client:
        assert client.send("protocol_version") == "2"
        assert client.send("name") == "FakePlayer"
        assert client.send("boardsize 5") == ""
        assert client.send("play b C3") == ""
        assert client.send("genmove w") == "A5"
        board = client.send("showboard")
        assert board.split("\n")[0] == "   A B C D E"
        assert " 3 . . X . . 3" in board.split("\n")
        commands = client.send("list_commands").split("\n")
        assert "genmove" in commands and "quit" in commands
        assert client.alive
    assert not client.alive
    assert client._proc.returncode == 0


def test_failure_answer_raises_and_client_stays_usable() -> None:
    with GtpClient(FAKE_ENGINE, timeout=10, env=engine_env()) as client:
        client.send("play b D4")
        with pytest.raises(GtpClientError) as info:
            client.send("play w D4")
        assert str(info.value) == "illegal move"
        assert info.value.failed and info.value.command == "play w D4"
        with pytest.raises(GtpClientError, match="^unknown command$"):
            client.send("frobnicate")
        assert client.send("name") == "FakePlayer"


def test_unusual_but_valid_answers() -> None:
    with stub("chatty") as client:
        assert client.send("echo  this") == "echo this"
        assert client.send("multi") == "first\nsecond"
        assert client.send("blank_first") == "  A B\n1 . ."
        with pytest.raises(GtpClientError, match="^cannot score$"):
            client.send("fail")
        assert client.send("still alive") == "still alive"


def test_hung_engine_times_out() -> None:
    client = stub("hang", timeout=0.5)
    start = time.monotonic()
    with pytest.raises(GtpClientError, match="timeout") as info:
        client.send("genmove b")
    elapsed = time.monotonic() - start
    assert 0.4 <= elapsed < 1.5
    assert not info.value.failed
    assert not client.alive  # killed: the stream can no longer be trusted
    with pytest.raises(GtpClientError, match="closed"):
        client.send("name")
    client.close()


def test_a_pause_of_the_client_does_not_count_against_the_timeout(monkeypatch) -> None:
    """A match paused with kill -STOP (both programs and the client) and
    resumed: the wait that spanned the pause ends long after it was asked
    to, and the answer that comes after it is taken, not a timeout."""
    from gtp import client as client_module

    with stub("chatty", timeout=1.0) as client:
        real = client._poll_line
        paused = []

        def poll_after_a_pause(command, timeout):
            if not paused:
                paused.append(timeout)
                time.sleep(2.0)                 # stopped for 2 s while waiting
                return client_module._NOTHING
            return real(command, timeout)

        monkeypatch.setattr(client, "_poll_line", poll_after_a_pause)
        assert client.send("echo after the pause") == "echo after the pause"
        assert paused == [client_module.PAUSE_SLICE]
        # the wait was stopped for 2 s, of which the 0.5 s slice was asked for
        assert 1.4 < client.paused < 2.5
        assert client.send("echo unpaused") == "echo unpaused" and client.paused == 0.0


def test_a_pause_that_ends_with_the_answer_waiting_is_told_apart(monkeypatch) -> None:
    """Stopped after the answer arrived: the wait returns the answer the
    moment the process runs again, and the pause is still counted."""
    with stub("chatty", timeout=1.0) as client:
        real = client._poll_line

        def answer_after_a_pause(command, timeout):
            line = real(command, 5.0)
            time.sleep(2.0)                     # stopped for 2 s with the line read
            return line

        monkeypatch.setattr(client, "_poll_line", answer_after_a_pause)
        assert client.send("echo late") == "echo late"
        # the head's wait and the empty line's, each stopped for 2 s: counted
        # beyond the 0.5 s slice each asked for
        assert 2.5 < client.paused < 5.0


def test_per_call_timeout_override() -> None:
    client = stub("hang", timeout=30)
    start = time.monotonic()
    with pytest.raises(GtpClientError, match="timeout"):
        client.send("name", timeout=0.2)
    assert time.monotonic() - start < 1.0
    client.close()


def test_engine_exiting_mid_command() -> None:
    client = stub("exit")
    with pytest.raises(GtpClientError, match="exited with status 3"):
        client.send("name")
    assert not client.alive
    client.close()


def test_engine_dead_before_command() -> None:
    client = stub("die_at_start")
    client._proc.wait(timeout=5)
    with pytest.raises(GtpClientError, match="exited"):
        client.send("name")
    client.close()


def test_garbage_answer() -> None:
    client = stub("garbage")
    with pytest.raises(GtpClientError, match="malformed"):
        client.send("name")
    assert not client.alive
    client.close()


def test_malformed_status_line() -> None:
    client = stub("chatty")
    with pytest.raises(GtpClientError, match="malformed"):
        client.send("bad_status")
    client.close()


def test_close_kills_unresponsive_engine() -> None:
    client = stub("hang", timeout=5)
    start = time.monotonic()
    client.close(timeout=0.3)
    assert time.monotonic() - start < 1.5
    assert client._proc.poll() is not None
    client.close()  # idempotent


def test_send_rejects_multiple_lines() -> None:
    with stub("chatty") as client:
        with pytest.raises(ValueError):
            client.send("name\nversion")
        with pytest.raises(ValueError):
            client.send("   ")


def find_gnugo() -> str | None:
    found = shutil.which("gnugo")
    if found is None and os.access("/usr/games/gnugo", os.X_OK):
        found = "/usr/games/gnugo"
    return found


@pytest.mark.gnugo
@pytest.mark.skipif(find_gnugo() is None, reason="GNU Go not installed")
def test_gnugo_session() -> None:
    gnugo = find_gnugo()
    assert gnugo is not None
    with GtpClient([gnugo, "--mode", "gtp", "--level", "1"], timeout=20) as client:
        assert client.send("name") == "GNU Go"
        assert client.send("boardsize 9") == ""
        assert client.send("play b E5") == ""
        move = client.send("genmove w")
        assert move.upper() in {"PASS", "RESIGN"} or len(move) in (2, 3)
        board = client.send("showboard").split("\n")
        assert board[0].split() == list("ABCDEFGHJ")
        with pytest.raises(GtpClientError, match="illegal move"):
            client.send("play w E5")
