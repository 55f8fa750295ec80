"""The GTP fuzzer (bench.fuzz): a bounded run against the real engine, as
CI's share of issue 15's long runs (``python -m bench.fuzz --lines 100000``),
and the generator's coverage of every registered command."""

from __future__ import annotations

import random
import subprocess
import sys

from bench import fuzz
from engine.gtp import build_registry, parse_args
from engine.player import Player
from gtp.protocol import parse, preprocess


def test_bounded_fuzz_of_the_engine(tmp_path):
    """1,500 random lines (about half a minute): every answer well formed,
    no stall, no death, no internal error or traceback, the replayed game as
    in a fresh engine, and quit obeyed within 2 s."""
    result = fuzz.fuzz(seed=7, lines=1500, engine_cmd=fuzz.DEFAULT_ENGINE.split(),
                       workdir=tmp_path, deadline=30.0)
    assert result.clean, result.problems
    assert result.answers == result.commands > 1300


def test_a_recorded_session_is_replayed_byte_for_byte_without_its_quit(tmp_path):
    """``--input FILE`` (as for ../shared/cases/gtp-hang-input.txt): every
    line is sent, a byte that is not UTF-8 included, an analysis is cut short
    by the next line, and the recorded ``quit`` is left out, so the session
    goes on to the fixed game and the run's own quit."""
    session = tmp_path / "session.txt"
    session.write_bytes(b"boardsize 9\nplay b E5\n\xff\xfe garbage\nlz-analyze 10\n"
                        b"7 quit\ngenmove w\n# a comment\nshowboard\nquit\n")
    source = fuzz.read_session(session)
    assert len(source) == 7 and source[2].encode("utf-8", "surrogateescape") == b"\xff\xfe garbage"
    result = fuzz.fuzz(seed=1, lines=0, engine_cmd=fuzz.DEFAULT_ENGINE.split(),
                       workdir=tmp_path / "run", deadline=30.0, source=source)
    assert result.clean, result.problems
    assert result.lines == 7 and result.answers == result.commands == 6


def test_a_missing_input_file_is_named():
    run = subprocess.run([sys.executable, "-m", "bench.fuzz", "--input", "/no/such/session.txt"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "/no/such/session.txt" in run.stderr


def test_the_generator_covers_every_command():
    commands = build_registry(Player(parse_args(["--quiet"]))).names()
    maker = fuzz.LineMaker(random.Random(1), commands)
    seen = set()
    for _ in range(20000):
        line = preprocess(maker.line())
        if line is not None:
            cmd = parse(line)
            seen.add(cmd.name)
            assert cmd.name != "quit" or cmd.args, "a quit that would end the session"
    assert set(commands) <= seen


def test_bad_options_exit_with_status_2():
    run = subprocess.run([sys.executable, "-m", "bench.fuzz", "--lines", "0"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "--lines" in run.stderr
