"""engine.analysis in process: streaming analysis over the player's search,
genmove with reports, live graphics, pondering, GUI data, parameters.

Stochastic checks use loose thresholds; timing checks allow for a loaded
machine (seconds where the engine needs tens of milliseconds).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from engine.analysis import Analysis, Report, lcb
from engine.board import BLACK, EMPTY, WHITE
from engine.gtp import build_registry, parse_args
from engine.player import Player
from gtp import parse
from gtp.commands import AnalysisRequest, MoveFilter
from gtp.registry import Stream
from tests.engine.tree_checks import structure_problems

ARGS = ["--rollouts", "200", "--seed", "1", "--quiet", "--max-memory", "4M"]
SGF = Path(__file__).resolve().parents[1] / "data" / "sgf"


@pytest.fixture(scope="module", autouse=True)
def warm_kernels() -> None:
    Player(parse_args(ARGS)).warm_up()


def make(*extra: str, size: int = 9) -> Analysis:
    player = Player(parse_args(ARGS + list(extra)))
    player.set_board_size(size)
    return Analysis(player)


def play(a: Analysis, *moves: str) -> None:
    letters = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
    for m in moves:
        color, v = m.split()
        a.player.play(color, None if v == "pass" else (letters.index(v[0]), int(v[1:]) - 1))


def wall_5x5(a: Analysis) -> None:
    """5x5, black on column C, white on column D: black owns A-C, white D-E."""
    a.player.set_board_size(5)
    a.player.set_komi(0)
    play(a, *(f"b C{r}" for r in range(1, 6)), *(f"w D{r}" for r in range(1, 6)))


class Collector:
    """Runs a streaming analysis in a thread and keeps its reports."""

    def __init__(self, a: Analysis, request: AnalysisRequest, genmove: bool = False) -> None:
        self.reports: list[Report] = []
        self.stream = Stream()
        self.result: list = []
        fn = a.genmove_analyze if genmove else a.analyze
        self.thread = threading.Thread(
            target=lambda: self.result.append(fn(request, self.stream, self.reports.append)),
            daemon=True)
        self.thread.start()

    def stop(self, within: float = 2.0) -> float:
        t0 = time.monotonic()
        self.stream.stop()
        self.thread.join(within + 5)
        took = time.monotonic() - t0
        assert not self.thread.is_alive()
        assert took < within, f"took {took:.2f}s to stop"
        return took

    def wait_reports(self, n: int, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.reports) < n and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(self.reports) >= n, f"only {len(self.reports)} reports"


# -- streaming analysis -------------------------------------------------------


def test_analysis_reports_grow_from_one_kept_tree_and_stop_promptly() -> None:
    a = make()
    play(a, "b E5", "w C3")
    c = Collector(a, AnalysisRequest(color="b", interval=0.05))
    c.wait_reports(6)
    c.stop()
    sims = [r.sims for r in c.reports]
    assert sims == sorted(sims) and sims[-1] > sims[0]            # one search, going on
    board = a.player.game.board
    for rep in c.reports:
        assert rep.color == "b"
        visits = [m.visits for m in rep.moves]
        assert visits == sorted(visits, reverse=True) and visits[0] > 0
        for m in rep.moves:
            assert 0 <= m.winrate <= 1 and 0 <= m.prior <= 1 and 0 <= m.lcb <= m.winrate
            assert m.pv[0] == m.move
            if m.move is not None:
                assert board.is_legal(board.point(*m.move), BLACK)
    # the tree stays with the player for the next genmove
    assert a.player.search.tree.used > 1


def test_analysis_respects_the_tree_memory_cap() -> None:
    a = make("--max-memory", "1M", "--threads", "2")
    c = Collector(a, AnalysisRequest(interval=0.1))
    deadline = time.monotonic() + 30
    tree = a.player.search.tree
    while not tree.full and time.monotonic() < deadline:
        time.sleep(0.05)
    full_at = c.reports[-1].sims if c.reports else 0
    n = len(c.reports)
    c.wait_reports(n + 3)
    c.stop()
    assert tree.full and tree.used <= tree.max_nodes and tree.edges_used <= tree.max_edges
    assert c.reports[-1].sims > full_at          # simulations go on without growing the tree


def test_analysis_of_the_other_colour_leaves_the_game_alone() -> None:
    a = make()
    play(a, "b E5")
    before = a.player.game.board.to_move
    c = Collector(a, AnalysisRequest(color="b", interval=0.05))
    c.wait_reports(2)
    c.stop()
    assert a.player.game.board.to_move == before == WHITE
    assert all(r.color == "b" for r in c.reports)
    assert all(m.move != (4, 4) for r in c.reports for m in r.moves)   # E5 is occupied


def test_ownership_and_score_lead_in_a_settled_position() -> None:
    a = make()
    wall_5x5(a)
    c = Collector(a, AnalysisRequest(color="w", interval=0.1, ownership=True))
    c.wait_reports(2)
    c.stop()
    rep = c.reports[-1]
    own = rep.ownership
    assert len(own) == 25
    rows = [own[r * 5:(r + 1) * 5] for r in range(5)]       # top row (5) first
    for row in rows:
        assert min(row[:3]) > 0.5 and max(row[3:]) < -0.5    # black left, white right
    # 15 to 10 at komi 0 (white's invasions keep the playouts' mean lower):
    # white to move is behind by the mean area lead, read off the ownership
    lead = rep.moves[0].score_lead
    assert lead < -1 and all(m.score_lead == lead for m in rep.moves)
    assert lead == pytest.approx(-sum(own), abs=1e-6)


def test_avoid_and_allow() -> None:
    a = make()
    play(a, "b E5", "w C3")
    board = a.player.game.board
    avoid = [(3, 3), (4, 3), (5, 3), (2, 4), (6, 6)]
    c = Collector(a, AnalysisRequest(color="b", interval=0.05,
                                     avoid=[MoveFilter("b", avoid, 1)]))
    c.wait_reports(3)
    c.stop()
    seen = {m.move for r in c.reports for m in r.moves}
    assert seen and not seen & set(avoid)
    assert a.player.search.root_key is None        # the pruned tree was dropped
    allow = [(2, 2 + k) for k in range(1, 4)] + [(6, 6)]
    c = Collector(a, AnalysisRequest(color="b", interval=0.05, allow=[MoveFilter("b", allow, 1)],
                                     avoid=[MoveFilter("w", [(6, 6)], 1)]))   # white's: ignored
    c.wait_reports(3)
    c.stop()
    seen = {m.move for r in c.reports for m in r.moves}
    assert seen <= set(allow) | {None} and (6, 6) in seen
    assert board is a.player.game.board


def test_min_and_max_moves() -> None:
    a = make()
    c = Collector(a, AnalysisRequest(interval=0.02, min_moves=81, max_moves=0))
    c.wait_reports(1)
    c.stop()
    assert len(c.reports[0].moves) >= 81
    c = Collector(a, AnalysisRequest(interval=0.02, max_moves=2))
    c.wait_reports(2)
    c.stop()
    assert all(len(r.moves) <= 2 for r in c.reports)


def test_lcb() -> None:
    assert lcb(0.6, 1) == 0.0
    assert lcb(0.5, 100) == pytest.approx(0.5 - 1.96 * 0.05)
    assert lcb(0.0, 50) == 0.0
    assert lcb(0.9, 10_000) < 0.9


# -- genmove with reports, interrupt, live graphics, pondering ----------------


def test_genmove_analyze_plays_the_move_and_reports_on_the_way() -> None:
    a = make("--rollouts", "1000000", "--time", "0.6")
    c = Collector(a, AnalysisRequest(color="b", interval=0.05), genmove=True)
    c.thread.join(20)
    assert not c.thread.is_alive()
    move = c.result[0]
    assert isinstance(move, tuple) and a.player.game.moves[-1][0] == BLACK
    assert len(c.reports) >= 3
    assert all(r.color == "b" and r.moves for r in c.reports)


def test_genmove_analyze_stops_when_asked() -> None:
    a = make("--rollouts", "100000000")
    c = Collector(a, AnalysisRequest(color="w", interval=0.05), genmove=True)
    c.wait_reports(2)
    c.stop(within=2.0)
    assert c.result and a.player.game.moves[-1][0] == WHITE


def test_interrupt_cuts_a_genmove_short() -> None:
    a = make("--rollouts", "100000000")
    box = []
    t = threading.Thread(target=lambda: box.append(a.genmove("b")), daemon=True)
    t.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    while t.is_alive() and time.monotonic() - t0 < 5:
        a.interrupt()
        t.join(0.05)
    assert not t.is_alive() and time.monotonic() - t0 < 2
    assert box and box[0] is not None


def test_live_graphics_during_genmove() -> None:
    got: list = []
    a = make("--rollouts", "1000000", "--time", "0.5")
    a.live, a.live_interval = got.append, 0.05
    a.genmove("b")
    assert got[-1] is None                   # the closing CLEAR
    reports = got[:-1]
    assert len(reports) >= 3 and all(isinstance(r, Report) and r.moves for r in reports)
    assert None not in reports
    a.live_interval = 0                      # off: nothing more
    a.genmove("w")
    assert len(got) == len(reports) + 1


def test_no_clear_without_graphics() -> None:
    """Live graphics on, but the move is chosen before the first report is
    due: nothing is drawn, so no CLEAR is sent either."""
    got: list = []
    a = make("--rollouts", "200")
    a.live, a.live_interval = got.append, 5.0
    a.genmove("b")
    assert got == []


def test_pondering_after_genmove() -> None:
    a = make()
    a.ponder = True
    assert a.idle() is None                  # nothing played yet
    a.genmove("b")
    runner = a.idle()
    assert runner is not None and a.idle() is None          # armed once per genmove
    search = a.player.search
    stream = Stream()
    t = threading.Thread(target=runner, args=(stream,), daemon=True)
    t.start()
    time.sleep(0.5)
    used = search.tree.used
    assert search.root_key is not None and used > 1
    t0 = time.monotonic()
    stream.stop()
    t.join(5)
    assert not t.is_alive() and time.monotonic() - t0 < 1.0
    # the pondered tree is the one the opponent's reply will descend into
    assert search.root_key[2] == WHITE


def test_pondering_keeps_the_memory_cap_with_two_threads() -> None:
    """The smallest cap (1 MiB) on 9x9, two search threads: pondering
    fills the tree and goes on simulating without growing it, the pools'
    bounds hold, the tree stays sound, and the game goes on from it."""
    a = make("--max-memory", "1M", "--threads", "2")
    a.ponder = True
    a.genmove("b")
    runner = a.idle()
    search = a.player.search
    stream = Stream()
    t = threading.Thread(target=runner, args=(stream,), daemon=True)
    t.start()
    t0 = time.monotonic()
    while not search.tree.full and time.monotonic() - t0 < 30:
        time.sleep(0.05)
    time.sleep(0.3)                          # full, and still pondering
    assert t.is_alive()
    stream.stop()
    t.join(5)
    tree = search.tree
    assert not t.is_alive() and tree.full
    assert tree.used <= tree.max_nodes and tree.edges_used <= tree.max_edges
    assert structure_problems(tree, a.player.game.board) == []
    board = a.player.game.board
    reply = next(v for v in ("E5", "C3") if board.color(board.at(v)) == EMPTY)
    play(a, f"w {reply}")
    move = a.genmove("b")
    assert isinstance(move, tuple) and a.player.game.moves[-1][0] == BLACK


def test_no_pondering_when_off_after_game_over_or_when_the_game_ended() -> None:
    a = make()
    a.genmove("b")
    assert a.idle() is None                  # ponder off
    a.ponder = True
    a.genmove("w")
    a.game_over()
    assert a.idle() is None
    play(a, "b pass", "w pass")
    a._armed = True
    assert a.idle() is None


# -- GUI data -----------------------------------------------------------------


def test_priors_favour_a_capture() -> None:
    a = make()
    a.player.set_board_size(5)
    play(a, "w C3", "b C2", "b B3", "b D3")          # white C3 in atari at C4
    priors = a.priors("b")
    assert priors and all(0 < v < 1 for v in priors.values())
    assert max(priors, key=priors.get) == (2, 3)       # C4 captures
    assert (2, 2) not in priors                        # occupied
    assert priors.keys() <= {(c, r) for c in range(5) for r in range(5)}


def test_search_report_is_cached_per_position() -> None:
    a = make()
    rep = a.report(None)
    assert rep.moves and rep.ownership is not None and rep.color == "b"
    assert a.report("b") is rep
    assert a.report("w") is not rep
    play(a, "b E5")
    assert a.report(None) is not rep


def test_ownership_rows_from_the_top() -> None:
    a = make()
    wall_5x5(a)
    own = a.ownership()
    assert len(own) == 25
    assert own[0] > 0.5 and own[4] < -0.5 and own[20] > 0.5 and own[24] < -0.5


# -- parameters and descriptions ----------------------------------------------


def test_parameters() -> None:
    a = make()
    listed = {key: (kind, value) for kind, key, value in a.params()}
    assert listed == {"rollouts": ("string", "200"), "threads": ("string", "1"),
                      "resign": ("string", "0.05"), "resign_margin": ("string", "3"),
                      "time": ("string", "0"),
                      "ponder": ("bool", "0"), "gfx_interval": ("string", "0")}
    search = a.player.search
    a.set_param("rollouts", "5000")
    a.set_param("resign", "0.1")
    a.set_param("resign_margin", "10")
    a.set_param("time", "2.5")
    a.set_param("ponder", "1")
    a.set_param("gfx_interval", "0.5")
    assert a.player.search is search
    a.set_param("threads", "2")
    assert a.player.search is not search and a.player.search.threads == 2
    cfg = a.player.config
    assert (cfg.rollouts, cfg.resign, cfg.resign_margin, cfg.move_time, cfg.threads) == \
        (5000, 0.1, 10.0, 2.5, 2)
    assert a.ponder and a.live_interval == 0.5
    a.set_param("time", "0")
    assert a.player.config.move_time is None
    for key, value in [("rollouts", "0"), ("rollouts", "x"), ("threads", "0"), ("threads", "65"),
                       ("resign", "1"), ("resign", "-0.1"), ("resign_margin", "-1"),
                       ("resign_margin", "x"), ("time", "nan"), ("time", "-1"),
                       ("ponder", "yes"), ("gfx_interval", "inf"), ("frobnicate", "1")]:
        with pytest.raises(ValueError):
            a.set_param(key, value)
    assert a.player.config.rollouts == 5000


def test_describe_and_explain() -> None:
    a = make()
    text = a.describe()
    assert text.splitlines()[0].startswith("delayed-go 0.1.0")
    assert "rollouts 200" in text and "tree cap 4194304 bytes (0.00 GiB)" in text and "seed 1" in text
    assert "rave_equiv 300 (root 300, count 3000)" in text
    assert a.explain_last_move() == ""
    a.genmove("b")
    explained = a.explain_last_move()
    assert explained.startswith(f"{a.player.last_result.sims} rollouts in ")
    assert "winrate" in explained and "best line" in explained
    # a new game has no last move (the fuzzer found the old one named on a
    # 25x25 board, past the letters)
    for new_game in (lambda: a.player.set_board_size(25), a.player.clear,
                     lambda: a.player.loadsgf(str(SGF / "tiny5.sgf"))):
        a.genmove("b")
        new_game()
        assert a.explain_last_move() == ""


# -- through the registry (what engine/gtp.py wires) --------------------------


def test_kgs_time_settings_reach_the_clocks() -> None:
    player = Player(parse_args(ARGS))
    reg = build_registry(player)
    assert reg.execute(parse("kgs-time_settings byoyomi 600 30 5")).ok
    for clock in player.game.clocks.values():
        assert (clock.main_time, clock.byo_yomi_time, clock.byo_yomi_stones) == (600, 30, 1)
    assert reg.execute(parse("kgs-time_settings none")).ok
    assert all(c.unlimited for c in player.game.clocks.values())


def test_registry_streaming_commands_in_process() -> None:
    player = Player(parse_args(ARGS))
    reg = build_registry(player)
    reg.execute(parse("boardsize 5"))
    resp = reg.execute(parse("kata-analyze w 5 ownership true"))
    assert resp.ok and resp.text.startswith("\ninfo move ")
    tail = resp.text.split(" ownership ")[1].split()
    assert len(tail) == 25
    resp = reg.execute(parse("lz-genmove_analyze b 5"))
    assert resp.ok and resp.text.split("\n")[-1].startswith("play ")
    assert player.game.moves and player.game.moves[-1][0] == BLACK
