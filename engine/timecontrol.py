"""How long to think about one move, from the GTP clocks.

GTP's time_settings gives main time plus Canadian byo-yomi (``stones`` moves
in ``byo_yomi_time``); time_left reports, before each genmove, the time left
and, in byo-yomi, the stones left in the current period (0 in main time).
KGS's Japanese byo-yomi arrives the same way, one stone per period.  A lag
buffer is kept back from every budget for network and GUI delays."""

from __future__ import annotations

from engine.game import Clock

MIN_MOVE_TIME = 0.05


def move_budget(clock: Clock, empty_points: int, lag: float) -> float | None:
    """Seconds for the next move, or None when the clock sets no limit."""
    if clock.main_time <= 0 and clock.byo_yomi_time <= 0:
        return None               # no time settings: no limit
    if clock.unlimited:
        return None
    if clock.time_left is None:   # no time_left yet: a fresh clock
        left, stones = clock.main_time, 0
        if left <= 0:
            left, stones = clock.byo_yomi_time, clock.byo_yomi_stones
    else:
        left, stones = clock.time_left, clock.stones_left
    if stones > 0:
        budget = left / stones - lag
    else:
        # main time: spread it over the moves the game probably still has,
        # and use a byo-yomi period's share on top once main time runs low
        moves_left = max(20.0, empty_points / 3.0)
        budget = left / moves_left
        if clock.byo_yomi_stones > 0 and clock.byo_yomi_time > 0:
            # overrunning main time only starts the first byo-yomi period,
            # so a move may use what is left plus one stone's share of it
            share = clock.byo_yomi_time / clock.byo_yomi_stones
            budget = min(max(budget, share - lag), left + share - lag)
        else:
            budget = min(budget, left - lag)
    return max(MIN_MOVE_TIME, budget)
