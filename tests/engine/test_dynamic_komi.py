"""Dynamic komi (Player.search_komi, SearchConfig.dyn_komi): the komi the
search plays with in handicap games and lopsided positions, never the one
the game is counted with."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.board import BLACK, WHITE
from engine.config import EngineConfig, SearchConfig
from engine.player import Player
from engine.search import SearchResult


def player(size: int = 19, rollouts: int = 200, seed: int = 3, **search) -> Player:
    return Player(EngineConfig(board_size=size, rollouts=rollouts, seed=seed,
                               search=SearchConfig(**search)))


def test_even_games_are_unchanged_unless_asked() -> None:
    p = player()
    p.set_komi(6.5)
    for _ in range(4):
        assert p.search_komi(BLACK) == p.search_komi(WHITE) == 6.5
        p.genmove("b" if p.game.to_move == BLACK else "w")
    assert p.last_komi == 6.5 and not p.komi_helps(BLACK) and not p.komi_helps(WHITE)


def test_linear_komi_falls_to_none_at_its_move() -> None:
    p = player()
    p.set_komi(0.5)
    p.fixed_handicap(4)
    assert p.game.handicap == 4 and p.game.to_move == WHITE
    assert p.search_komi(WHITE) == pytest.approx(0.5 + 28)
    assert p.komi_helps(WHITE) and not p.komi_helps(BLACK)
    for k in range(100):                   # pass moves: the count is what matters
        p.play("w" if k % 2 == 0 else "b", None)
    assert p.search_komi(BLACK) == pytest.approx(0.5 + 14)
    for k in range(100):
        p.play("w" if k % 2 == 0 else "b", None)
    assert p.search_komi(WHITE) == 0.5 and not p.komi_helps(WHITE)
    # other sizes in proportion to their area
    q = player(size=9)
    q.set_komi(0.5)
    q.fixed_handicap(2)
    assert q.search_komi(WHITE) == pytest.approx(14.5)
    end = 200 * 81 / 361
    for k in range(int(end) + 1):
        q.play("w" if k % 2 == 0 else "b", None)
    assert q.search_komi(WHITE) == 0.5
    # off when asked
    assert player(dyn_komi=0).linear_komi_extra() == 0.0


def test_adaptive_komi_moves_against_a_sure_winner_and_for_a_sure_loser() -> None:
    p = player(dyn_komi=2)
    p.set_komi(7.5)
    own = np.zeros(len(p.search.allow_all))

    def result(winrate: float) -> SearchResult:
        return SearchResult(0, winrate, 1000, 1.0, 1, [], own)

    p._adapt_komi(BLACK, result(0.9))          # black sure to win: more komi for white
    assert p.search_komi(BLACK) > 7.5 and p.search_komi(WHITE) == 7.5
    p._adapt_komi(WHITE, result(0.1))          # white sure to lose: more komi for white
    assert p.search_komi(WHITE) > 7.5 and p.komi_helps(WHITE)
    before = p.search_komi(WHITE)
    p._adapt_komi(WHITE, result(0.55))         # inside the band: unchanged
    assert p.search_komi(WHITE) == before
    for _ in range(100):
        p._adapt_komi(WHITE, result(0.0))
    assert p.search_komi(WHITE) == 7.5 + SearchConfig().dyn_komi_limit
    p.clear()
    assert p.search_komi(WHITE) == 7.5
    # the band holds the rollouts' winrate: a value network's share, which
    # hardly reads the komi, does not move it
    mixed = SearchResult(0, 0.2, 1000, 1.0, 1, [], own, rollout_winrate=0.55)
    p._adapt_komi(WHITE, mixed)
    assert p.search_komi(WHITE) == 7.5
    p._adapt_komi(WHITE, dataclasses.replace(mixed, winrate=0.55, rollout_winrate=0.2))
    assert p.search_komi(WHITE) > 7.5


def test_the_adaptive_komi_runs_out_with_the_game() -> None:
    """Its distance from the real komi is capped by a limit held until move
    dyn_komi_moves and falling to none at move dyn_komi_adapt_moves (200
    and 400 on 19x19; 44.88 and 89.75 on 9x9), so the real komi decides
    the endgame."""
    p = player(size=9, dyn_komi=2)
    p.set_komi(7.5)
    own = np.zeros(len(p.search.allow_all))
    lost = SearchResult(0, 0.0, 1000, 1.0, 1, [], own)
    for _ in range(100):
        p._adapt_komi(WHITE, lost)
    assert p.search_komi(WHITE) == 7.5 + 60
    for k in range(44):
        p.play("b" if k % 2 == 0 else "w", None)
    assert p.search_komi(WHITE) == 7.5 + 60                # held
    for k in range(23):
        p.play("b" if k % 2 == 0 else "w", None)
    start, end = 200 * 81 / 361, 400 * 81 / 361
    assert p.search_komi(WHITE) == pytest.approx(7.5 + 60 * (end - 67) / (end - start))
    p._adapt_komi(WHITE, lost)
    assert p.search_komi(WHITE) == pytest.approx(7.5 + 60 * (end - 67) / (end - start))
    for k in range(23):
        p.play("b" if k % 2 == 0 else "w", None)
    p._adapt_komi(WHITE, lost)
    assert p.search_komi(WHITE) == 7.5 and not p.komi_helps(WHITE)


def test_a_game_lost_with_all_the_adaptive_komi_may_be_resigned() -> None:
    """White far behind (Black owns every point), the search's winrate
    0.01: the adaptive komi on White's side bars resigning before move 200,
    and after it unless that komi is at its limit; the linear komi bars it
    until it runs out."""
    p = player(dyn_komi=2)
    p.set_komi(0.5)
    own = np.ones(len(p.search.allow_all))
    lost = SearchResult(0, 0.0, 1000, 1.0, 1, [], own)
    for _ in range(100):
        p._adapt_komi(WHITE, lost)
    assert p.search_komi(WHITE) == 60.5 and p.resign_barred(WHITE)
    assert not p._lost(WHITE, 0.01, 1000, own)             # move 0: barred
    for k in range(200):
        p.play("w" if k % 2 == 0 else "b", None)
    assert p.search_komi(WHITE) == 60.5                    # at its limit
    assert not p.resign_barred(WHITE) and p._lost(WHITE, 0.01, 1000, own)
    assert not p._lost(WHITE, 0.2, 1000, own)              # the search still hopes
    p.game.komi_adjust[WHITE] = 10.0                       # help left to give
    assert p.resign_barred(WHITE) and not p._lost(WHITE, 0.01, 1000, own)
    q = player()                                           # linear, 4 stones
    q.set_komi(0.5)
    q.fixed_handicap(4)
    for k in range(199):
        q.play("w" if k % 2 == 0 else "b", None)
    assert q.resign_barred(WHITE) and not q._lost(WHITE, 0.01, 1000, own)
    q.play("b", None)
    assert not q.resign_barred(WHITE) and q._lost(WHITE, 0.01, 1000, own)


def test_final_score_counts_with_the_real_komi() -> None:
    """Five black handicap stones on 5x5 (a wall on the B line), White's
    wall on the D line: both live, the C line is neutral, so the count is
    W+komi whatever the search's dynamic komi."""
    p = player(size=5, rollouts=300)
    p.set_komi(0.5)
    p.set_free_handicap([(1, r) for r in range(5)])
    for r in range(5):
        p.play("w", (3, r))
        p.play("b", None)
    assert p.game.handicap == 5 and p.search_komi(WHITE) > 5
    assert p.final_score() == "W+0.5"


def test_analysis_and_the_log_show_the_komi_in_use(caplog) -> None:
    from engine.analysis import Analysis
    p = player(rollouts=100)
    p.set_komi(0.5)
    p.fixed_handicap(2)
    with caplog.at_level("INFO", logger="engine"):
        p.genmove("w")
    assert "at dynamic komi 14.5 (real 0.5)" in caplog.text
    assert "at dynamic komi 14.5" in Analysis(p).explain_last_move()
    assert dataclasses.replace(SearchConfig(), dyn_komi=2).dyn_komi == 2
    with pytest.raises(ValueError, match="dyn_komi"):
        SearchConfig(dyn_komi=3)
