"""Delayed priors (engine/priors.py, nets/worker.py): the network's priors
reach the tree asynchronously, change the search, are normalised over the
legal moves, and replies for a position that changed are dropped.

Most tests use :class:`FakeNet`, a stand-in for nets.evaluator with a
controllable delay and a known answer; one uses the shipped default network.
"""

from __future__ import annotations

import threading
import time
import types
from collections import Counter

import numpy as np
import pytest

from engine.board import BLACK, PASS, Board
from engine.config import EngineConfig, SearchConfig
from engine.features import LEGAL
from engine.patterns import load_gammas
from engine.player import Player
from engine.priors import symmetric_probabilities, symmetry, symmetry_inverse
from engine.search import Search
from engine.tree import (EF_PRIOR_N, EI_MOVE, F_VISITS, NN_PENDING, NN_READY, ROOT,
                         T_MOVE, T_STATE)
from nets.worker import PriorWorker


class FakeNet:
    """Uniform over the legal points, except ``favourite`` (index i * n + j)
    which gets ``weight`` times more; each call sleeps ``delay`` seconds
    first.  ``gate``, when given, must be set before a call of the prior
    worker may finish (the root's own evaluation is not held back)."""

    def __init__(self, favourite: int | None = None, weight: float = 100.0,
                 delay: float = 0.0, gate: threading.Event | None = None,
                 pass_weight: float | None = None):
        self.favourite, self.weight, self.delay, self.gate = favourite, weight, delay, gate
        self.pass_weight = pass_weight      # a pass output (column n * n) with this weight
        self.device = types.SimpleNamespace(type="cpu")
        self.name = "fake"
        self.calls = 0
        self.positions = 0

    def supports(self, size: int) -> bool:
        return True

    def evaluate(self, planes: np.ndarray, colors: np.ndarray) -> np.ndarray:
        self.calls += 1
        self.positions += len(planes)
        if self.delay:
            time.sleep(self.delay)
        if self.gate is not None and threading.current_thread().name == "prior-worker":
            self.gate.wait(10)
        b = planes.shape[0]
        p = (planes[:, LEGAL].reshape(b, -1) > 0).astype(np.float32)
        if self.favourite is not None:
            p[:, self.favourite] *= self.weight
        if self.pass_weight is not None:
            p = np.concatenate([p, np.full((b, 1), self.pass_weight, np.float32)], axis=1)
        s = p.sum(axis=1, keepdims=True)
        return np.divide(p, s, out=np.zeros_like(p), where=s > 0)


def start_worker(net, batch: int = 32):
    def start(queue):
        w = PriorWorker(queue, net, batch=batch)
        w.start()
        return w
    return start


def ready_nodes(tree) -> list[int]:
    ti = tree.ti
    return [i for i in range(tree.used) if ti[T_STATE, i] == NN_READY]


def wait_for(predicate, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def edge_line(board: Board, p: int) -> int:
    col, row = board.coords(p)
    n = board.size
    return 1 + min(col, row, n - 1 - col, n - 1 - row)


# --------------------------------------------------------------------------


def search_served_in_step(search: Search, net, board: Board, sims: int, step: int = 50):
    """``search.run(board, 7.5, max_sims=sims)`` with the worker's job done
    in step with it: the search runs ``step`` simulations at a time (its
    tree kept; each run counts its own simulations) and between runs the
    worker serves the queue to empty, priors and values alike, as its
    thread would.  Each delayed result then arrives at the same simulation
    on every run, however loaded the machine, which the thread cannot
    promise.  Returns the last run's result and how many results, and of
    them values, the queue wrote into the tree."""
    worker = PriorWorker(search.queue, net, batch=32, max_wait=0.0)     # never started
    done = evaluated = valued = 0
    while done < sims:
        # a run may stop before its budget once its best move cannot be
        # overtaken within it: the loop goes on to the whole budget
        r = search.run(board, 7.5, max_sims=min(step, sims - done))
        done += r.sims
        while worker.serve(board.size, idle_wait=0.0):
            pass
        st = search.queue.stats         # since this run began
        evaluated += st.evaluated
        valued += st.valued
    return r, evaluated, valued


def test_shipped_network_moves_the_opening_off_the_second_line():
    """Empty 19x19, 1,000 simulations, seeds 1..10.  The heuristic priors
    know nothing of openings: the null search spreads its first move over
    the board, not only over lines 3 and 4 (first- and second-line moves
    too with the lighter rollouts before the ladder reader).
    With the shipped network's delayed priors (and values, where it has a
    value head) every seed plays on the third or fourth line, as strong
    players do.  (One thread, a simulation budget,
    and the queue served in step with the search: each seed's search is
    reproducible.)"""
    from nets.evaluator import PolicyEvaluator

    net = PolicyEvaluator(device="cpu", threads=1)
    gammas = load_gammas()
    null, with_net = Counter(), Counter()
    for seed in range(1, 11):
        board = Board(19)
        r = Search(SearchConfig(), gammas, 1, seed).run(board, 7.5, max_sims=1000)
        null[edge_line(board, r.move)] += 1
        s = Search(SearchConfig(), gammas, 1, seed)
        s.attach_network(net.evaluate, net.supports, value=Player._value_of(net))
        r, evaluated, valued = search_served_in_step(s, net, board, 1000)
        assert s.tree.tf[F_VISITS, ROOT] == 1000      # one tree, kept across the runs
        assert evaluated > 0, "no delayed prior arrived"
        assert valued > 0 or not net.has_value, "no delayed value arrived"
        with_net[edge_line(board, r.move)] += 1
    assert null[3] + null[4] < 10, f"null search lines {dict(null)}"
    assert with_net[3] + with_net[4] == 10, f"with the network, lines {dict(with_net)}"


def test_priors_arrive_asynchronously_into_every_move():
    net = FakeNet()
    player = Player(EngineConfig(board_size=9, rollouts=3000, seed=3), net, start_worker(net))
    try:
        # the search itself, not genmove: playing the move would keep only
        # the chosen subtree
        r = player.search.run(player.game.board, 7.5, max_sims=3000)
        assert r.net.requested > 20
        tree = player.search.tree
        assert wait_for(lambda: player.search.queue.unanswered() == 0)
        ready = ready_nodes(tree)
        assert len(ready) > 20, "the worker wrote priors into few nodes"
        cnn = SearchConfig().prior_cnn
        ei, ef = tree.ei, tree.ef
        for node in ready:
            # every legal point got the network's experience on top of its
            # heuristic prior; the pass, this network having no pass output,
            # its heuristic prior alone (at most 24 visits' worth)
            for k in tree.edges(node):
                got = float(ef[EF_PRIOR_N, k])
                assert got < cnn if ei[EI_MOVE, k] == PASS else got >= cnn, (node, k, got)
        # the displays renormalise the root's probabilities over its moves
        assert sum(c.prior for c in r.candidates) == pytest.approx(1.0, abs=1e-4)
        st = player.search.queue.stats
        assert st.evaluated >= len(ready) - 1 and st.batches >= 1
    finally:
        player.close()


def test_favourite_of_the_network_becomes_the_choice():
    """9x9 empty board, 400 simulations: a network that puts nearly all its
    probability on C3 (index row 6 from the top, column 2) makes the search
    play C3; without it the search never picks C3 in these seeds."""
    board = Board(9)
    c3 = board.at("C3")
    idx = (9 - 3) * 9 + 2
    gammas = load_gammas()
    without, with_net = Counter(), Counter()
    for seed in range(1, 6):
        r = Search(SearchConfig(), gammas, 1, seed).run(board, 7.5, max_sims=400)
        without[r.move == c3] += 1
        s = Search(SearchConfig(), gammas, 1, seed)
        net = FakeNet(favourite=idx, weight=1e4)
        s.attach_network(net.evaluate, net.supports, fed=False)    # the root's own evaluation only
        with_net[s.run(board, 7.5, max_sims=400).move == c3] += 1
    assert without[True] == 0 and with_net[True] == 5


def test_the_root_prior_weighs_the_root_alone_once_a_root():
    """``prior_root`` 400: the root's moves get 400 visits of the network's
    experience instead of ``prior_cnn``'s 40, on a fresh root from its own
    evaluation, and on a root kept from the last move (whose priors came
    from the worker, at 40) when its first search starts, once; the pass,
    to a network without a pass output, keeps its heuristic prior alone."""
    board = Board(9)
    gammas = load_gammas()
    net = FakeNet(favourite=(9 - 3) * 9 + 2)
    extra = {m: 0.0 if m == PASS else 360.0 for m in board.points()} | {PASS: 0.0}

    def root_priors(s) -> dict[int, float]:
        return {int(s.tree.ei[EI_MOVE, k]): float(s.tree.ef[EF_PRIOR_N, k])
                for k in s.tree.edges(ROOT)}

    def raised(before, after) -> dict[int, float]:
        assert before.keys() == after.keys()
        return {m: after[m] - before[m] for m in before}

    searches = []
    for cfg in (SearchConfig(), SearchConfig(prior_root=400.0)):
        s = Search(cfg, gammas, 1, 5)
        s.attach_network(net.evaluate, net.supports)
        searches.append((s, PriorWorker(s.queue, net, batch=32)))
    for s, worker in searches:
        worker.start()
    (plain, _), (rooted, _) = searches
    try:
        plain.run(board, 7.5, max_sims=1)
        r = rooted.run(board, 7.5, max_sims=2000)
        fresh = raised(root_priors(plain), root_priors(rooted))
        assert fresh == {m: extra[m] for m in fresh}
        after = board.copy()
        after.play(r.move)
        assert wait_for(lambda: rooted.queue.unanswered() == 0)
        rooted.advance(r.move, after)
        assert rooted.tree.ti[T_STATE, ROOT] == NN_READY      # its priors came from the worker
        kept = root_priors(rooted)
        rooted.run(after, 7.5, max_sims=1)
        once = root_priors(rooted)
        assert raised(kept, once) == {m: extra[m] for m in kept}
        rooted.run(after, 7.5, max_sims=1)
        assert root_priors(rooted) == once
    finally:
        for _, worker in searches:
            worker.stop()


def test_a_pass_output_gives_the_pass_its_prior():
    """A network with a pass output (probabilities n * n + 1, the pass
    last) gives the root's pass child its share of the policy and the
    network's prior experience on top of its heuristic prior; a network
    without one leaves the pass its heuristic prior alone."""
    board = Board(9)
    gammas = load_gammas()
    pass_child = {}
    for name, net in (("none", FakeNet()), ("low", FakeNet(pass_weight=0.5)),
                      ("high", FakeNet(pass_weight=81.0))):
        s = Search(SearchConfig(), gammas, 1, 1)
        s.attach_network(net.evaluate, net.supports, fed=False)
        r = s.run(board, 7.5, max_sims=50)
        ei, ef = s.tree.ei, s.tree.ef
        (k,) = [k for k in s.tree.edges(ROOT) if ei[EI_MOVE, k] == PASS]
        assert sum(c.prior for c in r.candidates) == pytest.approx(1.0, abs=1e-5)
        (prior,) = [c.prior for c in r.candidates if c.move == PASS]
        pass_child[name] = (prior, float(ef[EF_PRIOR_N, k]))
    cnn = SearchConfig().prior_cnn
    assert pass_child["none"][0] == 0.0
    assert pass_child["low"][0] == pytest.approx(0.5 / 81.5, rel=1e-5)
    assert pass_child["high"][0] == pytest.approx(0.5, rel=1e-5)
    assert pass_child["low"][1] == pytest.approx(pass_child["none"][1] + cnn)


def test_policy_only_passes_when_the_network_ranks_pass_first():
    """Policy-only play with a pass output: the network's pass, ranked
    first, is played; the network's GUI priors list points only."""
    from engine.analysis import Analysis
    net = FakeNet(pass_weight=1000.0)
    player = Player(EngineConfig(board_size=9, policy_only=True, seed=1), net, None)
    try:
        assert player.genmove("b") is None            # a pass (a vertex otherwise)
        assert player.genmove("w") is None
        assert player.move_probabilities()[PASS] > 0.9
        shown = Analysis(player).priors("b")
        assert len(shown) == 81 and all(isinstance(v, tuple) for v in shown)   # no pass
    finally:
        player.close()


class CornerNet(FakeNet):
    """Everything on the first point of the board it is shown (A9 on 9x9),
    a tenth of that on a pass."""

    def evaluate(self, planes, colors):
        self.calls += 1
        self.positions += len(planes)
        b, n = planes.shape[0], planes.shape[-1]
        p = np.zeros((b, n * n + 1), np.float32)
        p[:, 0], p[:, n * n] = 10 / 11, 1 / 11
        return p


def test_the_symmetric_mean_maps_each_image_back_onto_the_board():
    n = 9
    x = np.arange(2 * n * n, dtype=np.uint8).reshape(1, 2, n, n)
    for k in range(8):
        assert np.array_equal(symmetry_inverse(symmetry(x, k), k), x)
    assert len({symmetry(x, k).tobytes() for k in range(8)}) == 8
    net = CornerNet()
    mean = symmetric_probabilities(net.evaluate, x, BLACK, n)
    assert net.calls == 1 and net.positions == 8          # one batch of 8
    board = mean[:n * n].reshape(n, n)
    # A9 of each image is one of the four corners, twice each
    for i, j in ((0, 0), (0, n - 1), (n - 1, 0), (n - 1, n - 1)):
        assert board[i, j] == pytest.approx(10 / 11 / 4)
    assert board.sum() == pytest.approx(10 / 11) and mean[n * n] == pytest.approx(1 / 11)


def test_policy_only_averages_the_eight_symmetries():
    """FakeNet favours C2 of whatever it is shown: with the 8 symmetries
    the eight images of C2 share that favour alike; with 1 the move is C2."""
    board = Board(9)
    c2 = board.point(2, 1)
    images = {"C2", "B3", "G2", "H3", "B7", "C8", "H7", "G8"}
    favourite = 7 * 9 + 2                                  # C2: row 7 from the top, column 2
    one = Player(EngineConfig(board_size=9, policy_only=True, policy_symmetries=1, seed=1),
                 FakeNet(favourite=favourite), None)
    eight = Player(EngineConfig(board_size=9, policy_only=True, seed=1),
                   FakeNet(favourite=favourite), None)
    try:
        assert one.genmove("b") == (2, 1)
        probs = eight.move_probabilities(symmetries=8)
        shared = {board.name(p): v for p, v in probs.items() if v > 2 * min(probs.values())}
        assert set(shared) == images
        assert max(shared.values()) == pytest.approx(min(shared.values()))
        assert sum(probs.values()) == pytest.approx(1.0)
        move = eight.genmove("b")
        assert board.name(board.point(*move)) in images
        assert eight.move_probabilities()[c2] > 0.5         # as it is, C2 alone
    finally:
        one.close()
        eight.close()


def _stale_replies_dropped(change):
    gate = threading.Event()
    net = FakeNet(gate=gate)
    player = Player(EngineConfig(board_size=9, rollouts=2000, seed=5), net, start_worker(net))
    try:
        player.genmove("b")
        queue = player.search.queue
        assert queue.stats.requested > 0
        pending_before = queue.stats.requested - queue.stats.evaluated
        assert pending_before > 0, "the gate should hold every reply back"
        change(player)
        ready_before = ready_nodes(player.search.tree)
        stale_before = queue.stats.stale
        gate.set()
        assert wait_for(lambda: queue.depth() == 0)
        time.sleep(0.2)
        # nothing was written into the changed tree, every reply counted stale
        assert ready_nodes(player.search.tree) == ready_before
        assert queue.stats.stale > stale_before or queue.stats.stale >= pending_before
        ti = player.search.tree.ti
        assert not any(ti[T_STATE, i] == NN_PENDING for i in range(player.search.tree.used))
    finally:
        gate.set()
        player.close()


def test_stale_replies_after_undo_are_dropped():
    _stale_replies_dropped(lambda p: p.undo())


def test_stale_replies_after_play_are_dropped():
    """play keeps the subtree (tree reuse): its nodes move to new indices,
    so replies asked for the old ones must not land anywhere."""
    def play_best_reply(p):
        tree = p.search.tree
        best = max(tree.children(ROOT), key=lambda i: tree.tf[F_VISITS, i])
        p.play("w", p.game.board.coords(int(tree.ti[T_MOVE, best])))
        assert tree.used > 1, "the reply's subtree should be kept"
    _stale_replies_dropped(play_best_reply)


def test_search_goes_on_while_the_network_is_slow():
    """A network that takes 0.5 s a batch: the search does not wait for it
    (the root only waits once) and finishes its simulations."""
    net = FakeNet(delay=0.5)
    player = Player(EngineConfig(board_size=9, rollouts=1500, seed=2), net, start_worker(net))
    try:
        started = time.perf_counter()
        player.genmove("b")
        elapsed = time.perf_counter() - started
        r = player.last_result
        assert r.sims >= 300       # the early stop may end it before the budget
        assert elapsed < 0.5 + 3.0 + r.sims / 500, elapsed
        assert r.net.requested > r.net.evaluated
    finally:
        player.close()


def test_back_pressure_raises_the_visit_threshold_and_counts_drops():
    """A queue bound of 2 and a stalled network that takes one request at
    a time: the threshold for asking rises, and requests beyond twice the
    bound are dropped and counted."""
    gate = threading.Event()
    net = FakeNet(gate=gate)
    cfg = EngineConfig(board_size=9, rollouts=4000, seed=4,
                       search=SearchConfig(nn_queue=2))
    player = Player(cfg, net, start_worker(net, batch=1))
    try:
        player.genmove("b")
        r = player.last_result
        assert r.net.nn_visits > cfg.search.nn_visits
        assert r.net.dropped > 0
        assert player.search.queue.depth() <= 2 * 2
    finally:
        gate.set()
        player.close()


def test_worker_stops_promptly():
    net = FakeNet()
    player = Player(EngineConfig(board_size=9, rollouts=500, seed=1), net, start_worker(net))
    worker = player._worker
    player.genmove("b")
    started = time.perf_counter()
    player.close()
    assert not worker.is_alive()
    assert time.perf_counter() - started < 2.5


@pytest.mark.gpu
def test_gpu_evaluator_agrees_with_the_cpu():
    """Runs where CUDA is present: the pinned-buffer, bf16 path gives the
    CPU's probabilities to bf16 precision."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    from engine.features import planes
    from nets.evaluator import PolicyEvaluator

    board = Board(19)
    for v in ("Q16", "D4", "C16"):
        board.play(board.at(v))
    x = np.stack([planes(board, dtype=np.uint8)] * 3)
    colors = np.full(3, board.to_move)
    cpu = PolicyEvaluator(device="cpu").evaluate(x, colors)
    gpu = PolicyEvaluator(device="cuda").evaluate(x, colors)
    assert np.abs(cpu - gpu).max() < 0.02
    assert (cpu.argmax(axis=1) == gpu.argmax(axis=1)).all()


@pytest.mark.gpu
def test_cuda_graphs_give_the_eager_answers_at_every_batch_size():
    """Runs where CUDA is present: the CUDA-graph replays (batch padded to
    a power of two) give the eager forward pass's probabilities and values,
    whatever the padding rows held before; no capture fell back."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    from engine.features import planes
    from nets.evaluator import PolicyEvaluator

    rng = np.random.default_rng(1)
    rows, colors = [], []
    board = Board(19)
    for _ in range(40):
        moves = [p for p in board.points() if board.is_legal(p, board.to_move)]
        board.play(int(rng.choice(moves)))
        rows.append(planes(board, dtype=np.uint8))
        colors.append(board.to_move)
    x, c = np.stack(rows), np.array(colors)
    graphs = PolicyEvaluator(device="cuda")
    eager = PolicyEvaluator(device="cuda", cuda_graphs=False)
    for k in (40, 1, 3, 17, 3):
        p1, v1 = graphs.evaluate_value(x[:k], c[:k], 7.5)
        p0, v0 = eager.evaluate_value(x[:k], c[:k], 7.5)
        assert p1.shape == p0.shape and v1.shape == (k,)
        # bf16: the padded batch may take other convolution kernels
        assert np.abs(p1 - p0).max() < 0.01 and np.abs(v1 - v0).max() < 0.01
        assert (p1.argmax(axis=1) == p0.argmax(axis=1)).all()
        assert np.abs(graphs.evaluate(x[:k], c[:k]) - eager.evaluate(x[:k], c[:k])).max() < 0.01
    # batches of 64, 1, 4 and 32, each with and without the value head
    assert graphs.cuda_graphs and len(graphs._graphs._graphs) == 8
