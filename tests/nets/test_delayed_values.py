"""Delayed values (engine/tree.add_value, engine/priors.PriorQueue.deliver,
engine/search.select_child): a value network's judgement of a node reaches
the node and its ancestors once, never another tree, and moves the search.

:class:`FakeValueNet` stands in for nets.evaluator with a value head whose
answer the test chooses."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from engine.board import S_PASSES, Board
from engine.config import MIN_MEMORY, EngineConfig, SearchConfig
from engine.patterns import load_gammas
from engine.player import Player
from engine.features import N_PLANES
from engine.priors import R_NFRESH, PriorQueue, Ring
from engine.search import Search, params_vector, select_child
from engine.tree import (EI_NODE, EXPANDED, F_VALUE_N, F_VALUE_W, F_VISITS, F_WINS, NN_PENDING,
                         NN_READY, NO_NODE, ROOT, T_FIRST, T_MOVE, T_NCHILD, T_PARENT,
                         T_STATE, Tree, add_value, edge_child, init_edge, init_node)
from nets.worker import PriorWorker
from tests.nets.test_delayed_priors import FakeNet, start_worker, wait_for

OWN, OPP = 0, 1     # engine/features: the stones of the player to move, of the opponent


class FakeValueNet(FakeNet):
    """FakeNet's priors plus a value head: the player to move wins with
    probability ``value``; where black has a stone on ``point`` (index
    i * n + j), black wins with probability ``black_holds``."""

    has_value = True

    def __init__(self, value: float = 0.5, point: int | None = None,
                 black_holds: float = 0.5, **kw):
        super().__init__(**kw)
        self.value, self.point, self.black_holds = value, point, black_holds
        self.komis: list[float] = []

    def evaluate_value(self, planes, colors, komi):
        probs = self.evaluate(planes, colors)
        self.komis.append(komi)
        b = len(planes)
        v = np.full(b, self.value, np.float32)
        if self.point is not None:
            black_to_move = np.asarray(colors).reshape(b) == 1
            # planes 0 and 1: the stones of the player to move, of the opponent
            black = np.where(black_to_move, planes[:, OWN].reshape(b, -1)[:, self.point],
                             planes[:, OPP].reshape(b, -1)[:, self.point]) > 0
            v[black] = np.where(black_to_move[black], self.black_holds, 1 - self.black_holds)
        return probs, v


def chain_tree() -> Tree:
    """root(0) -> 1, 2; 1 -> 3, 4; 3 -> 5: edge blocks as expand makes
    them, a node behind every edge (edge k leads to node k + 1)."""
    tree = Tree(MIN_MEMORY)
    ti, tf, ei, ef = tree.arrays
    blocks = {ROOT: (0, 2), 1: (2, 2), 3: (4, 1)}
    for parent, (first, n) in blocks.items():
        for k in range(first, first + n):
            init_edge(ei, ef, k, 100 + k)
            init_node(ti, tf, k + 1, 100 + k, parent)
            ei[EI_NODE, k] = k + 1
        ti[T_FIRST, parent], ti[T_NCHILD, parent] = first, n
        ti[T_STATE, parent] = EXPANDED
    tree.used, tree.edges_used = 6, 5
    return tree


def test_a_value_goes_once_to_each_node_on_its_path_and_nowhere_else():
    tree = chain_tree()
    tf = tree.tf
    assert add_value(tree.ti, tf, 5, 0.8) == 4          # 5, 3, 1 and the root
    # node 5's mover gets 1 - 0.8 (the player to move at 5 wins with 0.8),
    # its parent's mover 0.8, and so on, alternating up to the root
    for node, win in ((5, 0.2), (3, 0.8), (1, 0.2), (ROOT, 0.8)):
        assert tf[F_VALUE_N, node] == 1.0
        assert abs(tf[F_VALUE_W, node] - win) < 1e-6
    for node in (2, 4):
        assert tf[F_VALUE_N, node] == 0.0 and tf[F_VALUE_W, node] == 0.0


def test_a_child_not_yet_valued_takes_its_parents_value_in_the_mix():
    """The root's children: 1 with rollouts 0.60 and a value of 0.35, 2
    with rollouts 0.55 and no value yet; the root's value mean is 0.30 for
    the player to move there.  The network says nothing about 1 against 2
    (its values sit where the root's does), so the rollouts' preference
    stands: 2 stands in with the root's 0.30, not with its own rollouts'
    0.55, which beat child 1's mix of 0.5375 (lambda 0.25) before
    2026-11-26.  Without the root's value, 2 is judged by rollouts alone."""
    tree = chain_tree()
    ti, tf, ei, ef = tree.arrays
    for node, visits, wins in ((ROOT, 200, 100), (1, 100, 60), (2, 100, 55)):
        tf[F_VISITS, node], tf[F_WINS, node] = visits, wins
    tf[F_VALUE_N, 1], tf[F_VALUE_W, 1] = 10, 3.5
    params = params_vector(SearchConfig(value_weight=0.25, c_explore=0.0), 7.5, 19)
    tf[F_VALUE_N, ROOT], tf[F_VALUE_W, ROOT] = 10, 7.0        # its mover's 0.7: 0.3 to move
    assert edge_child(ei, ti, select_child(ti, tf, ei, ef, ROOT, params)) == 1
    tf[F_VALUE_N, ROOT], tf[F_VALUE_W, ROOT] = 0, 0.0
    assert edge_child(ei, ti, select_child(ti, tf, ei, ef, ROOT, params)) == 2


def test_the_queue_adds_a_reply_value_once():
    """A node is NN_PENDING once: a second reply for it (a duplicate) finds
    it NN_READY and adds nothing."""
    tree = chain_tree()
    ti, tf = tree.ti, tree.tf
    queue = PriorQueue(tree)
    queue.size = 19
    ti[T_STATE, 3] = NN_PENDING
    probs = np.full((1, 361), 1 / 361, np.float32)
    ticket = [(queue.generation, 3, time.perf_counter())]
    queue.deliver(ticket, probs, np.array([0.3], np.float32))
    queue.deliver(ticket, probs, np.array([0.3], np.float32))
    assert ti[T_STATE, 3] == NN_READY
    assert queue.stats.valued == 1 and queue.stats.stale == 1
    assert [float(tf[F_VALUE_N, i]) for i in range(6)] == [1, 1, 0, 1, 0, 0]
    assert abs(tf[F_VALUE_W, 3] - 0.7) < 1e-6 and abs(tf[F_VALUE_W, 1] - 0.3) < 1e-6


def _two_threads_asking_for_node_3():
    """A 19x19 queue on chain_tree() and two search threads' rings, each
    holding one fresh, unpublished request for node 3."""
    tree = chain_tree()
    queue = PriorQueue(tree)
    queue.size = 19
    rings = [Ring(19), Ring(19)]
    for ring in rings:
        ring.rnode[0], ring.rcolor[0], ring.rbusy[0] = 3, 1, 1
        ring.rfresh[0], ring.rstate[R_NFRESH] = 0, 1
    return tree, queue, rings


def test_two_threads_asking_for_one_node_make_one_request():
    """Two search threads' kernels can both see a node EXPANDED and both
    ask for it (no atomic claim): the queue keeps the first request and
    merges the second, so the network evaluates the node once and no reply
    is dropped as stale (before 2026-11-26 the second reply was: 445 of
    9,135 requests with 16 threads on an H100)."""
    tree, queue, rings = _two_threads_asking_for_node_3()
    ti, tf = tree.ti, tree.tf
    for ring in rings:
        queue.publish(ring)
    ti[T_STATE, 3] = NN_PENDING
    assert queue.depth() == 1 and queue.stats.merged == 1 and rings[1].rbusy[0] == 0
    planes = np.zeros((4, N_PLANES, 19, 19), np.uint8)
    tickets = queue.take(planes, np.zeros(4, np.int32), 0.0)
    assert len(tickets) == 1
    queue.deliver(tickets, np.full((1, 361), 1 / 361, np.float32), np.array([0.3], np.float32))
    assert ti[T_STATE, 3] == NN_READY
    assert (queue.stats.evaluated, queue.stats.stale, queue.stats.overflow) == (1, 0, 0)
    assert float(tf[F_VALUE_N, 3]) == 1


def test_a_request_published_after_its_nodes_reply_is_merged():
    """The second thread publishes its request after its kernel batch, which
    can outlast the network's round trip: the first request's reply is
    then already in the tree, and the late one is merged, not evaluated
    again and dropped as stale (138 of 9,750 requests with 16 threads on
    an H200, 2026-11-27, before this)."""
    tree, queue, rings = _two_threads_asking_for_node_3()
    ti, tf = tree.ti, tree.tf
    ti[T_STATE, 3] = NN_PENDING
    queue.publish(rings[0])
    planes = np.zeros((4, N_PLANES, 19, 19), np.uint8)
    tickets = queue.take(planes, np.zeros(4, np.int32), 0.0)
    queue.deliver(tickets, np.full((1, 361), 1 / 361, np.float32), np.array([0.3], np.float32))
    assert ti[T_STATE, 3] == NN_READY
    queue.publish(rings[1])
    assert queue.depth() == 0 and queue.stats.merged == 1 and rings[1].rbusy[0] == 0
    assert queue.take(planes, np.zeros(4, np.int32), 0.0, idle_wait=0.0) == []
    assert (queue.stats.evaluated, queue.stats.stale, queue.stats.overflow) == (1, 0, 0)
    assert float(tf[F_VALUE_N, 3]) == 1


def _best_reply(player) -> None:
    """Play the root's most visited reply: the search keeps its subtree, at
    new indices."""
    tree = player.search.tree
    best = max(tree.children(ROOT), key=lambda i: tree.tf[F_VISITS, i])
    player.play("w", player.game.board.coords(int(tree.ti[T_MOVE, best])))
    assert tree.used > 1, "the reply's subtree should be kept"


def test_a_value_of_an_old_position_never_reaches_the_new_tree():
    """Replies held back by a gate while the position changes (undo; a play
    that keeps a subtree): when they come, no value lands anywhere."""
    for change in (lambda p: p.undo(), _best_reply):
        gate = threading.Event()
        net = FakeValueNet(value=0.9, gate=gate)
        player = Player(EngineConfig(board_size=9, rollouts=2000, seed=5), net,
                        start_worker(net))
        try:
            player.genmove("b")
            queue = player.search.queue
            assert queue.stats.requested > queue.stats.evaluated, "the gate holds replies back"
            change(player)
            tree = player.search.tree
            before = tree.tf[F_VALUE_N, :tree.used].copy()
            valued = queue.stats.valued
            gate.set()
            assert wait_for(lambda: queue.depth() == 0)
            time.sleep(0.2)
            assert np.array_equal(tree.tf[F_VALUE_N, :tree.used], before)
            assert queue.stats.valued == valued
        finally:
            gate.set()
            player.close()


def test_values_arrive_with_the_search_komi_and_fill_the_root():
    net = FakeValueNet(value=0.25)
    search = Search(SearchConfig(), load_gammas(), 1, 3)
    search.attach_network(net.evaluate, net.supports, value=net.evaluate_value)
    worker = PriorWorker(search.queue, net, batch=16)
    worker.start()
    try:
        board = Board(9)
        r = search.run(board, 5.5, max_sims=3000)
    finally:
        worker.stop()
    assert set(net.komis) == {5.5}
    valued = search.queue.stats.valued
    assert valued == search.queue.stats.evaluated > 20
    tf = search.tree.tf
    # the root's own evaluation and every delayed one below it
    assert tf[F_VALUE_N, ROOT] == valued + 1
    # every position says its player to move wins a quarter of games: a
    # root child (white to move) gives its mover, black, 0.75, and deeper
    # positions alternate 0.25 and 0.75
    judged = [i for i in search.tree.children(ROOT) if tf[F_VALUE_N, i] > 0]
    assert judged
    for i in judged:
        n = tf[F_VALUE_N, i]
        assert tf[F_VALUE_W, i] >= 0.75 * n - 0.5 * (n - 1) - 1e-4
    # the result keeps the best move's rollouts apart from the mix (values
    # still arriving after the search move the mix, not the rollouts)
    best = next(i for i in search.tree.children(ROOT) if search.tree.ti[T_MOVE, i] == r.move)
    assert r.rollout_winrate == pytest.approx(tf[F_WINS, best] / tf[F_VISITS, best])


def test_the_value_turns_the_choice():
    """Rollouts think little of black's B2 on an empty 7x7 board, and the
    network's prior for it (three times any other point's) does not change
    their mind; a value network that says black wins wherever it holds B2
    makes the search choose it, while the same search with lambda = 0 does
    not (5 seeds of 2,000 simulations, nodes evaluated from their second
    visit).  The search runs in steps of 200 simulations and waits for
    every answer between steps, so that a loaded machine's slow worker
    delays a value by at most one step (run in one piece, the test lost
    two seeds of five under CI's load).  The prior matters: a move the
    search never visits never gets a value, as in AlphaGo, where the
    policy decides what is read."""
    b2 = 5 * 7 + 1
    chosen = {}
    for lam in (0.0, 0.5):
        picks = []
        for seed in range(1, 6):
            net = FakeValueNet(value=0.5, point=b2, black_holds=0.98, favourite=b2, weight=3)
            search = Search(SearchConfig(value_weight=lam, nn_visits=2), load_gammas(), 1, seed)
            search.attach_network(net.evaluate, net.supports, value=net.evaluate_value)
            worker = PriorWorker(search.queue, net, batch=16)
            worker.start()
            try:
                board = Board(7)
                for _ in range(10):
                    r = search.run(board, 7.5, max_sims=200)
                    assert wait_for(lambda: search.queue.unanswered() == 0)
            finally:
                worker.stop()
            picks.append(board.name(r.move))
        chosen[lam] = picks
    assert chosen[0.5].count("B2") >= 4, chosen
    assert chosen[0.0].count("B2") <= 1, chosen


def test_a_network_without_a_value_head_brings_priors_only():
    net = FakeNet()
    player = Player(EngineConfig(board_size=9, rollouts=1500, seed=2), net, start_worker(net))
    try:
        player.search.run(player.game.board, 7.5, max_sims=1500)
        tree = player.search.tree
        assert wait_for(lambda: player.search.queue.unanswered() == 0)
        assert player.search.queue.stats.evaluated > 0
        assert not tree.tf[F_VALUE_N, :tree.used].any()
        assert tree.ti[T_PARENT, ROOT] == NO_NODE
    finally:
        player.close()


def _walls(player: Player) -> None:
    """9x9: Black's wall on row 2 with eyes at C1 and G1 (18 points),
    White's on row 3 and six stones above it (63): Black to move, 52.5
    points behind with komi 7.5, too few points left for an invasion to
    live (3,000 playouts: Black's winrate 0)."""
    for col in range(9):
        player.play("b", (col, 1))
        player.play("w", (col, 2))
    player.play("b", (2, 0))
    player.play("w", (4, 6))
    player.play("b", (6, 0))
    for vertex in ((4, 5), (2, 6), (6, 6), (2, 4), (6, 4)):
        player.play("w", vertex)


def test_policy_only_resigns_where_the_value_and_a_search_say_lost():
    """Policy-only play asks the value network with its probabilities: a
    value under --resign (0.01 here) makes it search the position, and it
    resigns only when that search finds the game lost by the search's own
    rule: Black resigns before any pass; White, told the same 0.01 of a
    game it wins, plays on; a value of 0.5 and a network without a value
    head never make it resign before a pass."""
    def player(net) -> Player:
        p = Player(EngineConfig(board_size=9, policy_only=True, rollouts=3000, seed=3), net)
        _walls(p)
        return p
    lost = player(FakeValueNet(value=0.01))
    assert lost.genmove("b") == "resign"
    assert lost.game.board.s[S_PASSES] == 0
    assert player(FakeValueNet(value=0.01)).genmove("w") not in ("resign", None)
    assert player(FakeValueNet(value=0.5)).genmove("b") not in ("resign", None)
    assert player(FakeNet()).genmove("b") not in ("resign", None)
