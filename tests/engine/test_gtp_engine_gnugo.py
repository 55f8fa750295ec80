"""Cross-checks of the engine's GTP answers against GNU Go 3.8.

Both programs run as subprocesses driven through ``gtp.GtpClient``:

* ``showboard`` of the empty 9x9, 13x13 and 19x19 boards, and of a 9x9
  position with captures on both sides, is GNU Go's diagram.  GNU Go writes
  the two "has captured" lines next to rows that depend on the board size;
  our engine always uses rows 2 and 1, so when the diagrams differ they are
  compared without that trailing text, and the texts themselves must agree.
* ``fixed_handicap n`` for sizes 7..19 and n 2..9: the same vertex set and
  the same accept/reject decision.
* ``loadsgf`` (with and without a move number): the same colour to move and
  the same position.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from gtp import GtpClient, GtpClientError


def find_gnugo() -> str | None:
    path = shutil.which("gnugo")
    if path:
        return path
    return "/usr/games/gnugo" if os.access("/usr/games/gnugo", os.X_OK) else None


GNUGO = find_gnugo()
SGF = Path(__file__).resolve().parent.parent / "data" / "sgf"
ROOT = Path(__file__).resolve().parent.parent.parent

pytestmark = [
    pytest.mark.gnugo,
    pytest.mark.skipif(GNUGO is None, reason="GNU Go not found (PATH, /usr/games)"),
]

CAPTURED = re.compile(r"\s+(?:WHITE \(O\)|BLACK \(X\)) has captured \d+ stones$")


@pytest.fixture(scope="module")
def gnugo():
    with GtpClient([GNUGO, "--mode", "gtp", "--level", "1", "--chinese-rules"],
                   timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def ours():
    argv = [sys.executable, "-m", "engine.gtp", "--rollouts", "100", "--seed", "1",
            "--quiet", "--max-memory", "4M"]
    with GtpClient(argv, timeout=60, cwd=str(ROOT)) as client:
        client.send("protocol_version", timeout=300)   # start-up may compile kernels
        yield client


def both(gnugo: GtpClient, ours: GtpClient, *commands: str) -> None:
    for cmd in commands:
        gnugo.send(cmd)
        ours.send(cmd)


def split_legend(board: str) -> tuple[list[str], list[str]]:
    """Board lines without the captured-stones text, and that text."""
    lines, legend = [], []
    for line in board.split("\n"):
        m = CAPTURED.search(line)
        if m:
            legend.append(m.group(0).strip())
            line = line[: m.start()]
        lines.append(line.rstrip())
    return lines, legend


def assert_same_board(theirs: str, mine: str) -> None:
    if theirs == mine:
        return
    t_lines, t_legend = split_legend(theirs)
    m_lines, m_legend = split_legend(mine)
    assert m_lines == t_lines, f"\nGNU Go:\n{theirs}\nours:\n{mine}"
    assert m_legend == t_legend


@pytest.mark.parametrize("size", [9, 13, 19])
def test_empty_showboard_matches_gnugo(gnugo: GtpClient, ours: GtpClient, size: int) -> None:
    both(gnugo, ours, f"boardsize {size}", "clear_board")
    theirs, mine = gnugo.send("showboard"), ours.send("showboard")
    assert_same_board(theirs, mine)
    if size == 9:  # the legend is on rows 2 and 1 in GNU Go too: identical diagrams
        assert mine == theirs
    # ours always puts the legend on rows 2 and 1
    lines = mine.split("\n")
    assert lines[-3].endswith("WHITE (O) has captured 0 stones")
    assert lines[-2].endswith("BLACK (X) has captured 0 stones")


def test_showboard_with_captures_matches_gnugo(gnugo: GtpClient, ours: GtpClient) -> None:
    both(gnugo, ours, "boardsize 9", "clear_board", "komi 6.5",
         "play b E5", "play w E6", "play w D5", "play w F5", "play w E4",   # white takes E5
         "play w A1", "play w B1", "play b A2", "play b B2", "play b C1",   # black takes two
         "play b H8", "play black G7", "play WHITE J9", "play b PASS")
    theirs, mine = gnugo.send("showboard"), ours.send("showboard")
    assert "WHITE (O) has captured 1 stones" in mine
    assert "BLACK (X) has captured 2 stones" in mine
    assert mine == theirs
    both(gnugo, ours, "undo", "undo", "undo")
    assert ours.send("showboard") == gnugo.send("showboard")


@pytest.mark.parametrize("size", range(7, 20))
def test_fixed_handicap_matches_gnugo(gnugo: GtpClient, ours: GtpClient, size: int) -> None:
    both(gnugo, ours, f"boardsize {size}")
    diffs = []
    for n in range(2, 10):
        answers = []
        for client in (gnugo, ours):
            client.send("clear_board")
            try:
                answers.append(frozenset(client.send(f"fixed_handicap {n}").upper().split()))
            except GtpClientError as exc:
                assert exc.failed, exc    # a "?" answer, not a dead engine
                answers.append(None)
        if answers[0] != answers[1]:
            diffs.append(f"n={n}: GNU Go {sorted(answers[0] or ['rejects'])}, "
                         f"ours {sorted(answers[1] or ['rejects'])}")
        elif answers[1] is not None:   # the stones are really on the board, same as GNU Go's
            assert_same_board(gnugo.send("showboard"), ours.send("showboard"))
    assert not diffs, f"{size}x{size}: " + "; ".join(diffs)


LOADS = [("tiny5.sgf", None), ("tiny5.sgf", 1), ("tiny5.sgf", 3), ("tiny5.sgf", 5),
         ("tiny5.sgf", 6), ("tiny5.sgf", 7), ("handicap9.sgf", None), ("handicap9.sgf", 2),
         ("setup5.sgf", None)]


@pytest.mark.parametrize("name,number", LOADS, ids=[f"{n}-{k}" for n, k in LOADS])
def test_loadsgf_matches_gnugo(gnugo: GtpClient, ours: GtpClient, name: str,
                               number: int | None) -> None:
    cmd = f"loadsgf {SGF / name}" + ("" if number is None else f" {number}")
    assert ours.send(cmd) == gnugo.send(cmd)
    # GNU Go marks star points on 5x5 too; the stones and captures must agree
    theirs = gnugo.send("showboard").replace("+", ".")
    mine = ours.send("showboard").replace("+", ".")
    assert mine == theirs
