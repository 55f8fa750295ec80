"""Tests for the pools of nodes and edges (engine/tree.py) and the tree the
search builds in them: structural invariants under several search threads
(tests/engine/tree_checks.py), the memory cap, the subtree copy behind tree
reuse, and that the layout of edges and lazily made nodes searches exactly
as the layout of one node per move did."""

from __future__ import annotations

import numpy as np
import pytest

from engine.board import Board
from engine.config import MIN_MEMORY, SearchConfig
from engine.patterns import load_gammas
from engine.search import Search
from engine.tree import (A_EDGE, A_EDGE_END, A_NODE, A_NODE_END, EDGE_BYTES, EF_AMAF_N,
                         EI_MOVE, EI_NODE, EXPANDED, F_VISITS, N_EFLOAT, N_EINT, N_FLOAT, N_INT,
                         NO_EDGE, NO_NODE, NODE_BYTES, ROOT, T_FIRST,
                         T_MOVE, T_NCHILD, T_PARENT, T_STATE, T_VLOSS, Tree, compact,
                         init_edge, init_node, pool_sizes)
from tree_checks import reachable, statistics_problems, structure_problems


@pytest.fixture(scope="module")
def gammas():
    return load_gammas()


vertex = Board.at


# --------------------------------------------------------------------------
# one thread: every invariant holds exactly


def test_single_thread_tree_is_exact(gammas):
    """One thread, 9x9, 4,000 simulations: the structure is sound, no
    virtual loss is left, visits add up, and the root has one visit per
    simulation."""
    board = Board(9)
    search = Search(SearchConfig(), gammas, threads=1, seed=1)
    result = search.run(board, 7.5, max_sims=4000)
    tree = search.tree
    assert structure_problems(tree, board) == []
    assert statistics_problems(tree) == []
    assert float(tree.tf[F_VISITS, ROOT]) == result.sims
    # every simulation went on to a child (the first expands the root and
    # goes on into one of its new children)
    assert float(tree.edge_visits(ROOT).sum()) == result.sims
    assert int((tree.ti[T_VLOSS, :tree.used] != 0).sum()) == 0


# --------------------------------------------------------------------------
# several threads


def _middle_game_9x9() -> Board:
    board = Board(9)
    for v in ("E5", "C4", "G4", "D6", "F7", "C7", "E3", "G6"):
        board.play(vertex(board, v))
    return board


@pytest.mark.parametrize("threads", [2, 4])
def test_threaded_search_keeps_the_tree_structure_sound(gammas, threads):
    """2 and 4 threads, 9x9 (empty board and a middle-game position), three
    seeds, 4,000 simulations each: structure invariants over the whole
    reachable tree (races on statistics are tolerated by design, races on
    the structure are not)."""
    for board in (Board(9), _middle_game_9x9()):
        for seed in (1, 2, 3):
            search = Search(SearchConfig(), gammas, threads=threads, seed=seed)
            result = search.run(board, 7.5, max_sims=4000)
            assert result.sims >= 1000
            assert structure_problems(search.tree, board) == [], (threads, seed)
            assert search.tree.used <= search.tree.max_nodes
            for c in result.candidates:
                assert board.is_legal(c.move, board.to_move)


@pytest.mark.parametrize("threads", [2, 4])
def test_threaded_search_leaves_no_virtual_loss_and_consistent_visits(gammas, threads):
    """2 and 4 threads, 9x9, ten runs of 3,000 simulations: after each run
    returns, no virtual loss is left anywhere and no node has fewer visits
    than its children together."""
    problems = []
    for seed in range(1, 11):
        board = Board(9) if seed % 2 else _middle_game_9x9()
        search = Search(SearchConfig(), gammas, threads=threads, seed=seed)
        search.run(board, 7.5, max_sims=3000)
        problems += [f"seed {seed}: {p}" for p in statistics_problems(search.tree)]
    assert problems == []


def test_threaded_reuse_over_a_game_keeps_the_tree_sound(gammas):
    """Two threads, 9x9, 12 moves of a game with tree reuse (run, play the
    chosen move, advance): the structure stays sound before and after every
    run, and the kept root has visits."""
    board = Board(9)
    search = Search(SearchConfig(), gammas, threads=2, seed=8)
    for _ in range(12):
        result = search.run(board, 7.5, max_sims=2500)
        assert structure_problems(search.tree, board) == []
        board.play(result.move)
        search.advance(result.move, board)
        assert structure_problems(search.tree, board) == []
        if search.root_key is not None:
            assert search.tree.tf[F_VISITS, ROOT] > 0


def test_clear_then_a_bigger_search_keeps_the_tree_sound(gammas):
    """A search on one position, then a four times longer one on an
    unrelated position (the tree is dropped): no thread may allocate over
    nodes the new search has already placed."""
    search = Search(SearchConfig(), gammas, threads=1, seed=7)
    search.run(Board(9), 7.5, max_sims=3000)
    other = _middle_game_9x9()
    result = search.run(other, 7.5, max_sims=12_000)
    assert structure_problems(search.tree, other) == []
    assert statistics_problems(search.tree) == []
    assert float(search.tree.tf[F_VISITS, ROOT]) == result.sims


# --------------------------------------------------------------------------
# the layout searches as the old one did


def test_edges_and_lazy_nodes_search_exactly_as_a_node_per_move():
    """One thread, fixed seeds, no network: the root's visit counts (the
    twelve most visited moves) and the chosen move of searches from the
    empty 9x9 and 19x19 boards and two moves of tree reuse after each, as
    the layout of one node per legal move (engine of 2026-11-26, 427368d)
    gave them.  Selection reads the same numbers in the same float32
    arithmetic, so nothing but the memory changed.  Both layouts ran with
    arenas too large to run out, so that no expansion is cut short where
    one layout's arena ends and the other's does not.  Both expanded a
    leaf at its second visit on either board size, and blended AMAF with
    RAVE's equivalence at 3,000, the default then."""
    gammas = load_gammas()
    expected = {
        (9, 0): (73, [302, 242, 178, 146, 124, 120, 103, 93, 72, 65, 63, 60]),
        (9, 1): (39, [406, 259, 156]),
        (9, 2): (60, [814, 229, 140]),
        (19, 0): (165, [63, 53, 52]),
        (19, 1): (101, [81, 68, 67]),
        (19, 2): (256, [68, 58, 43]),
    }
    for size, sims in ((9, 3000), (19, 1500)):
        search = Search(SearchConfig(expand_visits=2, rave_equiv=3000.0), gammas, threads=1,
                        seed=5)
        search.tree = Tree(SearchConfig().max_memory, edge_chunk=1 << 22, node_chunk=1 << 21)
        search.queue.tree = search.tree
        board = Board(size)
        for ply in range(3):
            result = search.run(board, 7.5, max_sims=sims)
            move, visits = expected[(size, ply)]
            got = [c.visits for c in result.candidates[:len(visits)]]
            assert (result.move, got) == (move, visits), (size, ply)
            board.play(result.move, board.to_move)
            search.advance(result.move, board)


# --------------------------------------------------------------------------
# memory cap


def test_the_tree_needs_a_mebibyte_and_splits_the_bytes_into_nodes_and_edges():
    with pytest.raises(ValueError, match="at least 1 MiB"):
        Tree(MIN_MEMORY - 1)
    tree = Tree(MIN_MEMORY)
    assert (tree.max_nodes, tree.max_edges) == pool_sizes(MIN_MEMORY) == (4_519, 36_157)
    pools = tree.max_nodes * NODE_BYTES + tree.max_edges * EDGE_BYTES
    assert MIN_MEMORY - (8 * EDGE_BYTES + NODE_BYTES) < pools <= MIN_MEMORY
    assert sum(a.nbytes for a in tree.arrays) == pools


def test_reserve_tops_an_arena_up_in_place_and_keeps_it_once_a_pool_is_spent():
    tree = Tree(MIN_MEMORY, edge_chunk=2048, node_chunk=256)    # 36,157 edges, 4,519 nodes
    a, b = np.zeros(4, np.int64), np.zeros(4, np.int64)
    assert tree.reserve(a, 16, 362) and list(a) == [0, 2048, 1, 257]
    a[A_NODE] = 250                                 # 7 nodes left, 16 asked for:
    assert tree.reserve(a, 16, 362) and list(a) == [0, 2048, 250, 513]     # grown in place
    assert tree.reserve(b, 16, 362) and list(b) == [2048, 4096, 513, 769]
    a[A_EDGE], a[A_NODE] = 2000, 510                # no longer the pools' last ranges:
    assert tree.reserve(a, 16, 362) and list(a) == [4096, 6144, 769, 1025]  # fresh ones
    assert tree.reserve(a, 600, 0) and list(a) == [4096, 6144, 769, 1369]   # more than a chunk
    assert (tree.used, tree.edges_used) == (1369, 6144)
    grown = 0
    while True:
        b[A_EDGE] = b[A_EDGE_END] - 100             # 100 edges left, 362 asked for
        before = b.copy()
        if not tree.reserve(b, 0, 362):
            break
        grown += 1
    assert grown == 14 and tree.edges_used == 6144 + 14 * 2048 <= tree.max_edges
    assert list(b) == list(before)                  # refused: the arena keeps its 100 edges
    assert tree.full and tree.used <= tree.max_nodes


def test_no_descent_is_cut_short_for_want_of_a_node(gammas):
    """Before each batch a thread's node arena is topped up with a node for
    every simulation of the batch (a simulation makes at most one), so while
    the pool lasts no descent ends early for want of a node, and the size of
    the arenas does not change the search: one thread, a fixed seed, 19x19
    after three moves, 4,000 simulations with a node arena of one node at a
    time, and with the default 512, search exactly (every node's and edge's
    statistics) as with an arena that never runs out.  RAVE's equivalence
    is 3,000 here, under which this search spends its whole budget (at the
    default 300 a search from this position may find its move decided and
    stop early).  (Until 2026-11-30 an
    arena spent in the middle of a batch ended that simulation's descent one
    move early: 40 of the 19,985 simulations of a 20,000-simulation search,
    docs/search.md.)"""
    moves = ("Q16", "D4", "Q3")
    trees = []
    for node_chunk in (1, 512, 1 << 21):
        search = Search(SearchConfig(rave_equiv=3000.0), gammas, threads=1, seed=4)
        search.tree = Tree(SearchConfig().max_memory, edge_chunk=1 << 22, node_chunk=node_chunk)
        search.queue.tree = search.tree
        board = Board(19)
        for m in moves:
            board.play(vertex(board, m))
        result = search.run(board, 7.5, max_sims=4000)
        assert result.sims == 4000
        trees.append(_snapshot(search.tree, ROOT))
    assert trees[0] == trees[2] and trees[1] == trees[2]


@pytest.mark.parametrize("threads", [1, 2])
def test_search_goes_on_after_the_pool_is_spent(gammas, threads):
    """The smallest cap (1 MiB: 36,157 edges, 4,519 nodes) on 9x9: a
    15,000 simulation search fills it in its first few thousand simulations
    and keeps simulating without growing the tree; no crash, the pools'
    bounds kept, a sound tree, and a second run on the same tree adds
    simulations."""
    cfg = SearchConfig(max_memory=MIN_MEMORY)
    board = Board(9)
    search = Search(cfg, gammas, threads=threads, seed=3)
    first = search.run(board, 7.5, max_sims=15_000)
    tree = search.tree
    assert first.sims > 5000
    assert tree.full
    assert tree.used <= tree.max_nodes and tree.edges_used <= tree.max_edges
    assert structure_problems(tree, board) == []
    root_before = float(tree.tf[F_VISITS, ROOT])
    # more simulations than the root has visits, so that the early stop
    # (the best move can no longer be overtaken) cannot end it at once
    second = search.run(board, 7.5, max_sims=20_000)
    assert second.sims >= 1000
    assert float(tree.tf[F_VISITS, ROOT]) > root_before
    assert tree.used <= tree.max_nodes and tree.edges_used <= tree.max_edges
    assert structure_problems(tree, board) == []
    assert board.is_legal(second.move, board.to_move)


def test_memory_per_simulation_is_the_edges_and_the_visited_nodes(gammas):
    """19x19 from the empty board, 3,000 simulations: the pools handed out
    hold about 360 edges per expansion and a node per move walked into, so
    the tree costs under 2,500 bytes a simulation (a node per legal move:
    about 4,100), and far fewer nodes than edges are made."""
    search = Search(SearchConfig(), gammas, threads=1, seed=2)
    result = search.run(Board(19), 7.5, max_sims=3000)
    assert result.tree_bytes == search.tree.bytes_used
    assert result.tree_bytes / result.sims < 2500
    assert len(reachable(search.tree)) < search.tree.edges_used / 20


# --------------------------------------------------------------------------
# compact and reroot


def _snapshot(tree: Tree, node: int) -> dict[tuple, tuple]:
    """Statistics of every node under ``node`` and of its edges, keyed by
    the move path."""
    ti, tf, ei, ef = tree.arrays
    out = {}
    stack = [(node, ())]
    while stack:
        i, path = stack.pop()
        out[path] = (int(ti[T_STATE, i]), int(ti[T_NCHILD, i]), int(ti[T_MOVE, i]),
                     *(float(tf[f, i]) for f in range(N_FLOAT)))
        for k in tree.edges(i):
            m = int(ei[EI_MOVE, k])
            c = tree.child(k)
            out[path + (m, "edge")] = (c != NO_NODE, *(float(ef[f, k]) for f in range(N_EFLOAT)))
            if c != NO_NODE:
                stack.append((c, path + (m,)))
    return out


def test_reroot_keeps_the_subtree_statistics_exactly(gammas):
    """After a 9x9 search, reroot to the most visited child: the new tree
    holds exactly that child's subtree (same nodes and edges by move path,
    same state, visits, wins, AMAF and prior counts), compacted to
    [0, used) and [0, edges_used), with sound links and no virtual loss."""
    board = Board(9)
    search = Search(SearchConfig(), gammas, threads=1, seed=5)
    search.run(board, 7.5, max_sims=4000)
    tree = search.tree
    edges = tree.edges(ROOT)
    child = tree.child(edges.start + int(np.argmax(tree.edge_visits(ROOT))))
    before = _snapshot(tree, child)
    move = int(tree.ti[T_MOVE, child])
    assert len(before) > 500
    tree.reroot(child)
    after = _snapshot(tree, ROOT)
    assert after == before
    assert tree.used == sum(1 for key in after if key[-1:] != ("edge",))
    assert tree.edges_used == sum(1 for key in after if key[-1:] == ("edge",))
    assert tree.ti[T_PARENT, ROOT] == NO_NODE
    assert tree.ti[T_MOVE, ROOT] == move
    assert structure_problems(tree) == []
    assert int((tree.ti[T_VLOSS, :tree.used] != 0).sum()) == 0


def _tiny_tree():
    """Root 0 with edges 0..2 (moves 10, 11, 12; nodes 1, 2 behind the
    first two); node 2 has edges 3..4 (moves 20, 21; node 3 behind 20);
    node 3 has edges 5..6 (moves 30, 31; node 4 behind 31).  Statistics
    are distinct numbers."""
    ti = np.zeros((N_INT, 8), np.int32)
    tf = np.zeros((N_FLOAT, 8), np.float32)
    ei = np.zeros((N_EINT, 8), np.int32)
    ef = np.zeros((N_EFLOAT, 8), np.float32)
    init_node(ti, tf, 0, -1, NO_NODE)
    for k, move in enumerate((10, 11, 12, 20, 21, 30, 31)):
        init_edge(ei, ef, k, move)
        for f in range(N_EFLOAT):
            ef[f, k] = 100 * f + k + 0.25
    for node, edge, parent in ((1, 0, 0), (2, 1, 0), (3, 3, 2), (4, 6, 3)):
        init_node(ti, tf, node, int(ei[EI_MOVE, edge]), parent)
        ei[EI_NODE, edge] = node
    for node, first, n in ((0, 0, 3), (2, 3, 2), (3, 5, 2)):
        ti[T_FIRST, node], ti[T_NCHILD, node], ti[T_STATE, node] = first, n, EXPANDED
    for i in range(5):
        for f in range(N_FLOAT):
            tf[f, i] = 100 * f + i + 0.5
        ti[T_VLOSS, i] = i % 2
    return ti, tf, ei, ef


def test_compact_keeps_the_subtree_in_place():
    ti, tf, ei, ef = _tiny_tree()
    before = tuple(a.copy() for a in (ti, tf, ei, ef))
    used, edges = compact(ti, tf, ei, ef, 2, 5)
    assert (used, edges) == (3, 4)            # nodes 2, 3, 4; edges 3 4, then 5 6
    assert ti[T_PARENT, 0] == NO_NODE and ti[T_MOVE, 0] == 11
    assert ti[T_FIRST, 0] == 0 and ti[T_NCHILD, 0] == 2
    assert ei[EI_MOVE, 0:2].tolist() == [20, 21]
    assert ei[EI_NODE, 0:2].tolist() == [1, NO_NODE]
    assert ti[T_PARENT, 1] == 0 and ti[T_MOVE, 1] == 20
    assert ti[T_FIRST, 1] == 2 and ti[T_NCHILD, 1] == 2
    assert ei[EI_MOVE, 2:4].tolist() == [30, 31]
    assert ei[EI_NODE, 2:4].tolist() == [NO_NODE, 2]
    assert ti[T_PARENT, 2] == 1 and ti[T_MOVE, 2] == 31
    assert ti[T_NCHILD, 2] == 0 and ti[T_FIRST, 2] == NO_EDGE
    for new, old in ((0, 2), (1, 3), (2, 4)):
        assert tf[:, new].tolist() == before[1][:, old].tolist()
        assert ti[T_VLOSS, new] == 0
    for new, old in ((0, 3), (1, 4), (2, 5), (3, 6)):
        assert ef[:, new].tolist() == before[3][:, old].tolist()


def test_compact_moves_a_root_made_after_its_descendants_to_the_front():
    """With several threads a node's descendants can come from an arena
    below its own index: the new root still becomes node 0 and nothing is
    written over before it has been moved.  Root 0 -> edges 0, 1 (nodes 4,
    2); node 4 -> edges 2, 3 (node 1 behind 2); node 1 -> edge 4 (node 3)."""
    ti = np.zeros((N_INT, 6), np.int32)
    tf = np.zeros((N_FLOAT, 6), np.float32)
    ei = np.zeros((N_EINT, 6), np.int32)
    ef = np.zeros((N_EFLOAT, 6), np.float32)
    init_node(ti, tf, 0, -1, NO_NODE)
    for k, move in enumerate((10, 11, 20, 21, 30)):
        init_edge(ei, ef, k, move)
        ef[EF_AMAF_N, k] = k + 0.5
    for node, edge, parent in ((4, 0, 0), (2, 1, 0), (1, 2, 4), (3, 4, 1)):
        init_node(ti, tf, node, int(ei[EI_MOVE, edge]), parent)
        ei[EI_NODE, edge] = node
        tf[F_VISITS, node] = 10 * node
    for node, first, n in ((0, 0, 2), (4, 2, 2), (1, 4, 1)):
        ti[T_FIRST, node], ti[T_NCHILD, node], ti[T_STATE, node] = first, n, EXPANDED
    assert compact(ti, tf, ei, ef, 4, 5) == (3, 3)
    assert [int(ti[T_MOVE, i]) for i in range(3)] == [10, 20, 30]
    assert [int(ti[T_PARENT, i]) for i in range(3)] == [NO_NODE, 0, 1]
    assert [float(tf[F_VISITS, i]) for i in range(3)] == [40.0, 10.0, 30.0]
    assert [(int(ti[T_FIRST, i]), int(ti[T_NCHILD, i])) for i in range(3)] == [
        (0, 2), (2, 1), (NO_EDGE, 0)]
    assert ei[EI_MOVE, 0:3].tolist() == [20, 21, 30]
    assert ei[EI_NODE, 0:3].tolist() == [1, NO_NODE, 2]
    assert ef[EF_AMAF_N, 0:3].tolist() == [2.5, 3.5, 4.5]


def test_edges_read_mid_expansion_are_none(gammas):
    """An analysis snapshot reads the tree while threads expand it; between
    an expansion's writes of the first edge and of the count a node can
    read as (NO_EDGE, k) or, corrupted, point past the pool.  Such a node
    has no edges for the Python readers (the principal variation once
    raised on it)."""
    search = Search(SearchConfig(), gammas, 1, 5)
    search.run(Board(9), 7.5, max_sims=200)
    tree = search.tree
    node = tree.children(ROOT)[0]
    tree.ti[T_FIRST, node], tree.ti[T_NCHILD, node] = NO_EDGE, 5
    assert tree.edges(node) == range(0)
    assert tree.children(node) == []
    assert tree.child_with_move(node, 3) == NO_NODE
    assert search.principal_variation(node) == [int(tree.ti[T_MOVE, node])]
    tree.ti[T_FIRST, node] = tree.ei.shape[1] - 2
    assert tree.edges(node) == range(tree.ei.shape[1] - 2, tree.ei.shape[1])


def test_layout_bytes_and_memory_sizes():
    """The memory cap in bytes (--max-memory) is engine/tree.py's pools of
    nodes and edges."""
    from engine.config import MAX_MEMORY, parse_bytes
    assert NODE_BYTES == 4 * N_INT + 4 * N_FLOAT == 40
    assert EDGE_BYTES == 4 * N_EINT + 4 * N_EFLOAT == 24
    assert [parse_bytes(t) for t in ("2G", "512m", "1.5G", "300000", "64MB", "1T")] == [
        2 << 30, 512 << 20, 3 << 29, 300000, 64 << 20, 1 << 40]
    for bad in ("", "G", "-1G", "0", "two", "nanG", "1X"):
        with pytest.raises(ValueError, match="not a size"):
            parse_bytes(bad)
    assert SearchConfig().max_memory == MAX_MEMORY == 2 << 30
    assert pool_sizes(MAX_MEMORY) == (9_256_395, 74_051_160)
