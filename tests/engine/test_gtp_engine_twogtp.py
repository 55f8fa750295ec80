"""Replay what GoGui's gogui-twogtp sends: two games on 9x9 between the engine
(``python -m engine.gtp --rollouts 200 --seed 1 --quiet``) and GNU Go
(``--level 1 --chinese-rules``), both driven through ``gtp.GtpClient``.

The controller's conversation, as twogtp has it: a handshake per program
(protocol_version, name, version, list_commands and known_command checks),
then per game boardsize, clear_board, komi and time_settings, alternating
genmove / play (passes relayed as ``PASS``, the way GNU Go writes them)
until two passes in a row, a resignation or 150 moves, then final_score to
both programs; quit at the end.  Both programs keep running between games,
and the colours alternate.

Checked: no ``?`` answer from either side to any command, every genmove
answer is a vertex the other program accepts, a pass or resign, and both
final_score answers parse.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from gtp import GtpClient, GtpClientError
from gtp.vertex import parse_vertex


def find_gnugo() -> str | None:
    path = shutil.which("gnugo")
    if path:
        return path
    return "/usr/games/gnugo" if os.access("/usr/games/gnugo", os.X_OK) else None


GNUGO = find_gnugo()
ROOT = Path(__file__).resolve().parent.parent.parent
SIZE = 9
MAX_MOVES = 150
GAMES = 2
SCORE_RE = re.compile(r"^(?:[BW]\+\d+(?:\.\d+)?|0)$")

pytestmark = [
    pytest.mark.gnugo,
    pytest.mark.skipif(GNUGO is None, reason="GNU Go not found (PATH, /usr/games)"),
]

OURS_ARGV = [sys.executable, "-m", "engine.gtp", "--rollouts", "200", "--seed", "1", "--quiet"]
GNUGO_ARGV = [GNUGO or "gnugo", "--mode", "gtp", "--level", "1", "--chinese-rules"]


class Side:
    """One program, with the controller's log of what it was sent."""

    def __init__(self, label: str, client: GtpClient) -> None:
        self.label = label
        self.client = client
        self.log: list[str] = []

    def send(self, cmd: str, timeout: float | None = None) -> str:
        try:
            answer = self.client.send(cmd, timeout=timeout)
        except GtpClientError as exc:
            tail = "\n".join(self.log[-12:])
            raise AssertionError(f"{self.label} answered {cmd!r} with an error: {exc.message}\n"
                                 f"last exchanges:\n{tail}") from None
        self.log.append(f"{cmd} -> {answer}")
        return answer


def handshake(side: Side) -> None:
    assert side.send("protocol_version", timeout=300) == "2"   # start-up may compile kernels
    assert side.send("name")
    side.send("version")
    commands = set(side.send("list_commands").split())
    for cmd in ("boardsize", "clear_board", "komi", "play", "genmove", "final_score", "quit"):
        assert cmd in commands, f"{side.label} lacks {cmd}"
    for cmd in ("time_settings", "genmove", "final_score", "gogui-interrupt"):
        assert side.send(f"known_command {cmd}") in ("true", "false")


def play_game(black: Side, white: Side) -> dict:
    for side in (black, white):
        side.send(f"boardsize {SIZE}")
        side.send("clear_board")
        side.send("komi 7.5")
        side.send("time_settings 0 1 0")   # byo-yomi time with no stones: no time limit
    sides = {"b": black, "w": white}
    moves: list[str] = []
    passes = 0
    resigned = None
    colour = "b"
    while len(moves) < MAX_MOVES:
        mover, other = sides[colour], sides["w" if colour == "b" else "b"]
        answer = mover.send(f"genmove {colour}")
        word = answer.strip().lower()
        if word == "resign":
            resigned = colour
            break
        if word == "pass":
            passes += 1
            other.send(f"play {colour} PASS")
            moves.append(f"{colour} PASS")
        else:
            vertex = parse_vertex(answer, SIZE)   # a syntax error fails the test here
            assert vertex is not None
            passes = 0
            other.send(f"play {colour} {answer}")   # the other program judges legality
            moves.append(f"{colour} {answer.upper()}")
        if passes >= 2:
            break
        colour = "w" if colour == "b" else "b"
    scores = {side.label: side.send("final_score") for side in (black, white)}
    for label, score in scores.items():
        assert SCORE_RE.match(score), f"{label} final_score {score!r}"
    return {"moves": moves, "resigned": resigned, "scores": scores}


def test_twogtp_games_against_gnugo() -> None:
    started = time.monotonic()
    with GtpClient(OURS_ARGV, timeout=60, cwd=str(ROOT)) as ours_client, \
            GtpClient(GNUGO_ARGV, timeout=60) as gnugo_client:
        ours, gnugo = Side("engine", ours_client), Side("gnugo", gnugo_client)
        handshake(ours)
        handshake(gnugo)
        results = []
        for game in range(GAMES):
            black, white = (ours, gnugo) if game % 2 == 0 else (gnugo, ours)
            result = play_game(black, white)
            results.append(result)
            print(f"game {game + 1}: {black.label} (B) v {white.label} (W), "
                  f"{len(result['moves'])} moves, resigned: {result['resigned']}, "
                  f"scores {result['scores']}")
            assert result["moves"] or result["resigned"]
        for side in (ours, gnugo):
            assert side.send("quit") == ""
        deadline = time.monotonic() + 10
        while ours_client.alive and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not ours_client.alive, "the engine did not exit after quit"
    elapsed = time.monotonic() - started
    print(f"{GAMES} games in {elapsed:.1f}s")
