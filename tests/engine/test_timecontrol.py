"""Tests for time management: move_budget (engine/timecontrol.py) on the GTP
clocks, and timed 9x9 games of the engine against itself with the clocks
kept by a controller written here.

The controller does what a GTP controller (gogui-twogtp, KGS) does: before
each genmove it sends ``time_left COLOR SECONDS STONES`` with the seconds
rounded down to an integer (GTP's time_left takes integers), it measures the
wall-clock time the genmove took and charges it to that colour's clock:
main time first, then Canadian byo-yomi periods (``stones`` moves within
``byo_yomi_time``; the time left in a period is reported with the stones
still to play in it).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.config import EngineConfig
from engine.game import Clock
from engine.player import Player
from engine.timecontrol import MIN_MOVE_TIME, move_budget

EMPTY_9x9 = 81

# --------------------------------------------------------------------------
# move_budget


def test_no_time_settings_means_no_limit():
    assert move_budget(Clock(), EMPTY_9x9, 1.0) is None
    # a time_left without time_settings sets no limit either
    assert move_budget(Clock(time_left=30.0, stones_left=0), EMPTY_9x9, 1.0) is None


def test_byo_yomi_time_without_stones_means_no_limit():
    """GTP: byo_yomi_time > 0 with byo_yomi_stones 0 means no time limit."""
    assert move_budget(Clock(main_time=60.0, byo_yomi_time=10.0), EMPTY_9x9, 1.0) is None
    assert move_budget(Clock(main_time=0.0, byo_yomi_time=10.0, time_left=5.0), 30, 1.0) is None


def test_sudden_death_spreads_the_time_over_the_game():
    """time_settings 60 0 0: the game is expected to last at least 20 more
    moves (a third of the empty points, when more), the budget is the time
    left over that count."""
    fresh = Clock(main_time=60.0)
    assert move_budget(fresh, EMPTY_9x9, 1.0) == pytest.approx(60.0 / 27)
    assert move_budget(fresh, 361, 1.0) == pytest.approx(60.0 / (361 / 3))
    reported = Clock(main_time=60.0, time_left=30.0, stones_left=0)
    assert move_budget(reported, 40, 1.0) == pytest.approx(30.0 / 20)
    assert move_budget(reported, EMPTY_9x9, 1.0) == pytest.approx(30.0 / 27)
    # the budget follows time_left, not the initial main time
    assert move_budget(Clock(main_time=60.0, time_left=6.0), EMPTY_9x9, 1.0) == \
        pytest.approx(6.0 / 27)


def test_sudden_death_keeps_the_lag_buffer_and_a_minimum():
    """With 1.5 s left and a 1 s lag the budget is 1.5 / 20 = 0.075 s (under
    the 0.5 s the lag leaves); with 0.5 s left nothing is left after the lag
    and the budget is the minimum move time, never negative."""
    assert move_budget(Clock(main_time=60.0, time_left=1.5), 50, 1.0) == pytest.approx(0.075)
    assert move_budget(Clock(main_time=60.0, time_left=0.5), 50, 1.0) == MIN_MOVE_TIME
    assert move_budget(Clock(main_time=60.0, time_left=0.0), 50, 1.0) == MIN_MOVE_TIME
    assert MIN_MOVE_TIME > 0


def test_byo_yomi_divides_the_period_between_the_stones_left():
    """Main time spent, 25 s left in the period for 3 stones, lag 1 s:
    25 / 3 - 1 seconds for this move."""
    clock = Clock(main_time=300.0, byo_yomi_time=30.0, byo_yomi_stones=5,
                  time_left=25.0, stones_left=3)
    assert move_budget(clock, EMPTY_9x9, 1.0) == pytest.approx(25.0 / 3 - 1.0)
    # the last stone of the period may take everything but the lag
    clock.time_left, clock.stones_left = 4.0, 1
    assert move_budget(clock, EMPTY_9x9, 1.0) == pytest.approx(3.0)
    # Japanese byo-yomi as KGS sends it: one stone per period
    japanese = Clock(main_time=0.0, byo_yomi_time=10.0, byo_yomi_stones=1,
                     time_left=10.0, stones_left=1)
    assert move_budget(japanese, EMPTY_9x9, 1.0) == pytest.approx(9.0)


def test_byo_yomi_only_starts_in_the_first_period():
    """time_settings 0 30 5 and no time_left yet: a fresh 30 s period for
    5 stones."""
    clock = Clock(main_time=0.0, byo_yomi_time=30.0, byo_yomi_stones=5)
    assert move_budget(clock, EMPTY_9x9, 1.0) == pytest.approx(30.0 / 5 - 1.0)


def test_main_time_with_byo_yomi_to_follow_may_use_a_period_share():
    """In main time with Canadian byo-yomi ahead the budget is at least a
    stone's share of a period (less the lag): overrunning main time only
    starts the first period, whose share this move then uses.  It never
    exceeds the main time left plus that share, less the lag."""
    clock = Clock(main_time=60.0, byo_yomi_time=30.0, byo_yomi_stones=5,
                  time_left=60.0, stones_left=0)
    assert move_budget(clock, EMPTY_9x9, 1.0) == pytest.approx(30.0 / 5 - 1.0)
    clock.time_left = 3.0
    assert move_budget(clock, EMPTY_9x9, 1.0) == pytest.approx(5.0)
    clock.time_left = 0.0
    assert move_budget(clock, EMPTY_9x9, 1.0) == pytest.approx(5.0)
    clock.time_left = 600.0
    assert move_budget(clock, 180, 1.0) == pytest.approx(10.0)   # 600 s over 60 moves


def test_lag_is_subtracted_from_the_budget():
    """The lag buffer comes off the budget second for second (byo-yomi), and
    a bigger lag never gives a bigger budget."""
    clock = Clock(main_time=0.0, byo_yomi_time=30.0, byo_yomi_stones=5,
                  time_left=30.0, stones_left=5)
    assert move_budget(clock, EMPTY_9x9, 0.0) - move_budget(clock, EMPTY_9x9, 2.0) == \
        pytest.approx(2.0)
    sudden = Clock(main_time=60.0, time_left=3.0)
    assert move_budget(sudden, 20, 0.0) == pytest.approx(3.0 / 20)
    assert move_budget(sudden, 20, 2.9) == pytest.approx(0.1)


clocks = st.builds(
    Clock,
    main_time=st.sampled_from([0.0, 1.0, 5.0, 60.0, 1800.0]),
    byo_yomi_time=st.sampled_from([0.0, 1.0, 5.0, 30.0, 600.0]),
    byo_yomi_stones=st.integers(0, 25),
    time_left=st.one_of(st.none(), st.floats(0.0, 4000.0, allow_nan=False)),
    stones_left=st.integers(0, 25),
)


@settings(max_examples=500, deadline=None)
@given(clock=clocks, empty=st.integers(0, 361), lag=st.floats(0.0, 5.0, allow_nan=False))
def test_budget_is_never_negative_nor_beyond_the_clock(clock, empty, lag):
    """For any clock: no limit (None) or a positive number of seconds, at
    least the minimum move time, and never more than the time on the clock
    less the lag (unless that is below the minimum) -- in main time with
    Canadian byo-yomi ahead, plus one stone's share of a period."""
    budget = move_budget(clock, empty, lag)
    if clock.main_time <= 0 and clock.byo_yomi_time <= 0:
        assert budget is None
        return
    if clock.unlimited:
        assert budget is None
        return
    assert budget is not None and math.isfinite(budget)
    assert budget >= MIN_MOVE_TIME > 0
    if clock.time_left is not None:
        left = clock.time_left
    else:
        left = clock.main_time if clock.main_time > 0 else clock.byo_yomi_time
    in_main_time = clock.stones_left == 0 if clock.time_left is not None else clock.main_time > 0
    if in_main_time and clock.byo_yomi_time > 0 and clock.byo_yomi_stones > 0:
        left += clock.byo_yomi_time / clock.byo_yomi_stones
    assert budget <= max(MIN_MOVE_TIME, left - lag) + 1e-9


# --------------------------------------------------------------------------
# timed games


@dataclass
class ControllerClock:
    """One colour's clock as the controller keeps it (seconds, floats)."""
    main: float
    byo_time: float
    byo_stones: int
    in_byo: bool = False
    period_left: float = 0.0
    stones_left: int = 0
    lowest: float = math.inf          # least time ever left (main or period)
    byo_moves: int = 0

    def time_left_args(self) -> tuple[int, int]:
        """What ``time_left`` says: whole seconds, stones (0 in main time)."""
        if self.in_byo:
            return max(0, math.floor(self.period_left)), self.stones_left
        return max(0, math.floor(self.main)), 0

    def charge(self, used: float) -> None:
        if not self.in_byo:
            if used <= self.main or self.byo_stones == 0:
                self.main -= used
                self.lowest = min(self.lowest, self.main)
                return
            used -= self.main             # main time ran out during this move:
            self.main = 0.0               # the rest counts in the first period
            self.in_byo = True
            self.period_left, self.stones_left = self.byo_time, self.byo_stones
        self.period_left -= used
        self.lowest = min(self.lowest, self.period_left)
        self.byo_moves += 1
        self.stones_left -= 1
        if self.stones_left == 0 and self.period_left >= 0:
            self.period_left, self.stones_left = self.byo_time, self.byo_stones


def play_timed_game(main: int, byo: int, stones: int, max_moves: int, seed: int):
    """Two engines (one Player each, 9x9, komi 7.5, one thread, unlimited
    rollouts so the clock is what stops each search) under
    ``time_settings main byo stones``.  Returns the two clocks and, per
    move, (colour, seconds reported by time_left, stones, seconds used)."""
    colors = ("b", "w")
    players = {}
    for i, c in enumerate(colors):
        cfg = EngineConfig(board_size=9, komi=7.5, rollouts=10**7, threads=1,
                           resign=0.0, seed=seed + i)
        players[c] = Player(cfg)
        players[c].warm_up()
        players[c].time_settings(main, byo, stones)
    clocks = {c: ControllerClock(float(main), float(byo), stones) for c in colors}
    record = []
    passes = 0
    for n in range(max_moves):
        c = colors[n % 2]
        left, st_left = clocks[c].time_left_args()
        players[c].time_left(c, left, st_left)
        started = time.perf_counter()
        move = players[c].genmove(c)
        used = time.perf_counter() - started
        clocks[c].charge(used)
        record.append((c, left, st_left, used))
        assert clocks[c].lowest >= 0, f"{c} ran out of time at move {n + 1}: {record[-3:]}"
        if move == "resign":
            break
        other = colors[1 - n % 2]
        players[other].play(c, move)
        passes = passes + 1 if move is None else 0
        if passes == 2:
            break
    return clocks, record


@pytest.mark.slow
def test_sudden_death_game_never_runs_out_of_time():
    """``time_settings 20 0 0`` (20 s sudden death each).  The game is
    stopped after 20 moves (10 a side, about 13 s of play) or two passes:
    by then each side has spent about a third of its clock.  Neither clock
    ever goes below 0; every move stays within its share of the reported
    time (at most time_left / 20, plus 0.35 s for the controller's rounding
    and the search's last batch); the engine does use its time (the first
    move thinks for most of its 20 / 27 s budget)."""
    clocks, record = play_timed_game(20, 0, 0, max_moves=20, seed=101)
    for c, clock in clocks.items():
        assert clock.main >= 0 and clock.lowest >= 0
        assert not clock.in_byo
    for c, left, st_left, used in record:
        assert st_left == 0
        assert used <= left / 20 + 0.35, (c, left, used)
    assert record[0][3] >= 0.5
    spent = {c: 20.0 - clocks[c].main for c in clocks}
    assert all(s > 4.0 for s in spent.values()), spent


@pytest.mark.slow
def test_byo_yomi_game_never_exceeds_a_period():
    """``time_settings 2 10 5``: 2 s main time, then byo-yomi periods of 10 s
    for 5 stones (the 5 s per 5 stones of the issue's example would leave
    nothing per stone after the engine's 1 s lag buffer).  18 moves or two
    passes: main time runs out for both sides by their third move (each
    may take a stone's share of the first period, 2 s less the 1 s lag),
    then each side plays a whole period of 5 stones and starts a second;
    no period is ever exceeded (the controller's clock never goes below 0),
    and in byo-yomi each move stays within its share of the period
    (time_left / stones)."""
    clocks, record = play_timed_game(2, 10, 5, max_moves=18, seed=202)
    for c, clock in clocks.items():
        assert clock.lowest >= 0, (c, clock)
    assert any(clock.in_byo and clock.byo_moves >= 6 for clock in clocks.values()), clocks
    for c, left, st_left, used in record:
        if st_left > 0:
            assert used <= left / st_left + 0.35, (c, left, st_left, used)
