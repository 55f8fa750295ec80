"""Tests for the node pool (engine/tree.py) and the tree the search builds in
it: structural invariants under several search threads, the memory cap, and
the subtree copy behind tree reuse.

Invariants checked over the whole tree reachable from the root:

* structure: every children block lies inside [1, tree.used), blocks of
  different nodes do not overlap, every child's parent pointer is the node
  whose block holds it, no move appears twice among a node's children, the
  root's children are legal moves;
* statistics (after ``run`` returned, so no simulation is in flight): every
  node's virtual loss is back to 0, and a node has at least as many visits
  as its children together (a node is visited once before it is expanded,
  and every visit of a child went through it).
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.board import Board
from engine.config import SearchConfig
from engine.patterns import load_gammas
from engine.search import Search
from engine.tree import (EXPANDED, F_AMAF_N, F_AMAF_W, F_PRIOR_N, F_PRIOR_W, F_VISITS,
                         F_WINS, NO_NODE, ROOT, T_FIRST, T_MOVE, T_NCHILD, T_PARENT,
                         T_STATE, T_VLOSS, UNEXPANDED, Tree, copy_subtree, init_node)



@pytest.fixture(scope="module")
def gammas():
    return load_gammas()


vertex = Board.at


def reachable(tree: Tree) -> list[int]:
    """Every node reachable from the root (breadth first)."""
    ti = tree.ti
    out, queue = [], [ROOT]
    while queue:
        node = queue.pop()
        out.append(node)
        n = int(ti[T_NCHILD, node])
        if n > 0:
            first = int(ti[T_FIRST, node])
            if 0 < first and first + n <= ti.shape[1]:
                queue.extend(range(first, first + n))
    return out


def structure_problems(tree: Tree, board: Board | None = None) -> list[str]:
    ti = tree.ti
    problems = []
    blocks = []
    for node in reachable(tree):
        n, first = int(ti[T_NCHILD, node]), int(ti[T_FIRST, node])
        if n == 0:
            continue
        if not (0 < first and first + n <= tree.used):
            problems.append(f"node {node}: children block {first}..{first + n - 1} "
                            f"outside [1, {tree.used})")
            continue
        if ti[T_STATE, node] == UNEXPANDED:
            problems.append(f"node {node}: has children but is UNEXPANDED")
        blocks.append((first, first + n))
        moves = ti[T_MOVE, first:first + n].tolist()
        if len(set(moves)) != n:
            problems.append(f"node {node}: a move appears twice among its children")
        bad = [k for k in range(first, first + n) if ti[T_PARENT, k] != node]
        if bad:
            problems.append(f"node {node}: children {bad[:3]} point to parents "
                            f"{[int(ti[T_PARENT, k]) for k in bad[:3]]}")
    blocks.sort()
    for (a0, a1), (b0, b1) in zip(blocks, blocks[1:]):
        if a1 > b0:
            problems.append(f"children blocks {a0}..{a1 - 1} and {b0}..{b1 - 1} overlap")
    if board is not None:
        for i in tree.children(ROOT):
            m = int(ti[T_MOVE, i])
            if not board.is_legal(m, board.to_move):
                problems.append(f"root child {i}: illegal move {m}")
    return problems


def statistics_problems(tree: Tree) -> list[str]:
    ti, tf = tree.ti, tree.tf
    problems = []
    for node in reachable(tree):
        if ti[T_VLOSS, node] != 0:
            problems.append(f"node {node}: virtual loss {int(ti[T_VLOSS, node])} left")
        n, first = int(ti[T_NCHILD, node]), int(ti[T_FIRST, node])
        if n > 0 and 0 < first and first + n <= tree.used:
            below = float(tf[F_VISITS, first:first + n].sum())
            if below > float(tf[F_VISITS, node]):
                problems.append(f"node {node}: {tf[F_VISITS, node]:.0f} visits < "
                                f"{below:.0f} of its children")
    return problems


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
    kids = tree.children(ROOT)
    # every simulation went on to a child (the first expands the root and
    # goes on into one of its new children)
    assert float(tree.tf[F_VISITS, kids.start:kids.stop].sum()) == result.sims
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
# memory cap


def test_tree_needs_at_least_1024_nodes():
    with pytest.raises(ValueError):
        Tree(1000)
    assert Tree(1024).max_nodes == 1024


def test_grant_refuses_once_the_pool_is_spent():
    tree = Tree(10_000, chunk=4096)
    arena = np.zeros(2, np.int64)
    assert tree.grant(arena) and list(arena) == [1, 4097]
    assert tree.grant(arena) and list(arena) == [4097, 8193]
    assert not tree.grant(arena) and arena[0] == arena[1]
    assert tree.used == 8193 <= tree.max_nodes


@pytest.mark.parametrize("threads", [1, 2])
def test_search_goes_on_after_the_pool_is_spent(gammas, threads):
    """max_nodes=20,000 (chunk 4,096: four chunks fit) on 9x9: a 15,000
    simulation search fills the pool in its first 3,000 or so simulations
    and keeps simulating without expanding; no crash, used <= max_nodes,
    a sound tree, and a second run on the same tree adds simulations."""
    cfg = SearchConfig(max_nodes=20_000)
    board = Board(9)
    search = Search(cfg, gammas, threads=threads, seed=3)
    first = search.run(board, 7.5, max_sims=15_000)
    tree = search.tree
    assert first.sims > 5000           # the pool is spent after about 3,000
    assert tree.used <= cfg.max_nodes
    assert tree.used + tree.chunk > cfg.max_nodes        # the pool is spent
    assert structure_problems(tree, board) == []
    root_before = float(tree.tf[F_VISITS, ROOT])
    # more simulations than the root has visits, so that the early stop
    # (the best move can no longer be overtaken) cannot end it at once
    second = search.run(board, 7.5, max_sims=20_000)
    assert second.sims >= 1000
    assert float(tree.tf[F_VISITS, ROOT]) > root_before
    assert tree.used <= cfg.max_nodes
    assert structure_problems(tree, board) == []
    assert board.is_legal(second.move, board.to_move)


# --------------------------------------------------------------------------
# copy_subtree and reroot


def _snapshot(tree: Tree, node: int) -> dict[tuple, tuple]:
    """Statistics of every node under ``node`` keyed by its move path."""
    ti, tf = tree.ti, tree.tf
    out = {}
    stack = [(node, ())]
    while stack:
        i, path = stack.pop()
        n = int(ti[T_NCHILD, i])
        out[path] = (int(ti[T_STATE, i]), n,
                     *(float(tf[f, i]) for f in (F_VISITS, F_WINS, F_AMAF_N, F_AMAF_W,
                                                 F_PRIOR_N, F_PRIOR_W)))
        if n > 0:
            first = int(ti[T_FIRST, i])
            for k in range(first, first + n):
                stack.append((k, path + (int(ti[T_MOVE, k]),)))
    return out


def test_reroot_keeps_the_subtree_statistics_exactly(gammas):
    """After a 9x9 search, reroot to the most visited child: the new tree
    holds exactly that child's subtree (same nodes by move path, same state,
    visits, wins, AMAF and prior counts), compacted to [0, used), with
    sound parent pointers and no virtual loss."""
    board = Board(9)
    search = Search(SearchConfig(), gammas, threads=1, seed=5)
    search.run(board, 7.5, max_sims=4000)
    tree = search.tree
    kids = tree.children(ROOT)
    child = kids.start + int(np.argmax(tree.tf[F_VISITS, kids.start:kids.stop]))
    before = _snapshot(tree, child)
    move = int(tree.ti[T_MOVE, child])
    assert len(before) > 50
    tree.reroot(child)
    after = _snapshot(tree, ROOT)
    assert after == before
    assert tree.used == len(after)
    assert tree.ti[T_PARENT, ROOT] == NO_NODE
    assert tree.ti[T_MOVE, ROOT] == move
    assert structure_problems(tree) == []
    assert int((tree.ti[T_VLOSS, :tree.used] != 0).sum()) == 0


def _tiny_tree() -> tuple[np.ndarray, np.ndarray]:
    """Root 0 with children 1..3; child 2 has children 4..5; child 4 has
    children 6..7.  Statistics are distinct numbers."""
    ti = np.zeros((6, 16), np.int32)
    tf = np.zeros((6, 16), np.float32)
    init_node(ti, tf, 0, -1, NO_NODE)
    for i, (move, parent) in enumerate([(10, 0), (11, 0), (12, 0), (20, 2), (21, 2),
                                        (30, 4), (31, 4)], start=1):
        init_node(ti, tf, i, move, parent)
    for node, first, n in ((0, 1, 3), (2, 4, 2), (4, 6, 2)):
        ti[T_FIRST, node], ti[T_NCHILD, node], ti[T_STATE, node] = first, n, EXPANDED
    for i in range(8):
        for f in range(6):
            tf[f, i] = 100 * f + i + 0.5
        ti[T_VLOSS, i] = i % 2
    return ti, tf


def test_copy_subtree_kernel_keeps_statistics_and_compacts():
    ti, tf = _tiny_tree()
    di = np.full((6, 16), -7, np.int32)
    df = np.full((6, 16), -7.0, np.float32)
    used = copy_subtree(ti, tf, 2, di, df)
    assert used == 5                          # 2, its children 4 5, 4's children 6 7
    assert di[T_PARENT, 0] == NO_NODE and di[T_MOVE, 0] == 11
    assert di[T_FIRST, 0] == 1 and di[T_NCHILD, 0] == 2
    assert di[T_MOVE, 1:3].tolist() == [20, 21]
    assert di[T_PARENT, 1:3].tolist() == [0, 0]
    assert di[T_FIRST, 1] == 3 and di[T_NCHILD, 1] == 2
    assert di[T_MOVE, 3:5].tolist() == [30, 31]
    assert di[T_PARENT, 3:5].tolist() == [1, 1]
    for new, old in ((0, 2), (1, 4), (2, 5), (3, 6), (4, 7)):
        assert df[:, new].tolist() == tf[:, old].tolist()
        assert di[T_VLOSS, new] == 0
    for leaf in (2, 3, 4):
        assert di[T_NCHILD, leaf] == 0 and di[T_FIRST, leaf] == NO_NODE


def test_copy_subtree_into_a_small_pool_cuts_whole_blocks():
    """When a node's children block does not fit, the node becomes an
    unexpanded leaf (its own statistics kept) rather than a half block."""
    ti, tf = _tiny_tree()
    di = np.zeros((6, 4), np.int32)
    df = np.zeros((6, 4), np.float32)
    used = copy_subtree(ti, tf, 0, di, df)
    assert used == 4                          # root + its three children; 2's block does not fit
    assert di[T_NCHILD, 0] == 3
    for k in range(1, 4):
        assert di[T_NCHILD, k] == 0 and di[T_FIRST, k] == NO_NODE
        assert di[T_STATE, k] == UNEXPANDED
        assert df[:, k].tolist() == tf[:, k].tolist()


def test_children_read_mid_expansion_are_none(gammas):
    """An analysis snapshot reads the tree while threads expand it; between
    an expansion's writes of the first child and of the count a node can
    read as (NO_NODE, k) or, corrupted, point past the pool.  Such a node
    has no children for the Python readers (the principal variation once
    raised on it)."""
    search = Search(SearchConfig(), gammas, 1, 5)
    search.run(Board(9), 7.5, max_sims=200)
    tree = search.tree
    node = tree.children(ROOT)[0]
    tree.ti[T_FIRST, node], tree.ti[T_NCHILD, node] = NO_NODE, 5
    assert tree.children(node) == range(0)
    assert tree.child_with_move(node, 3) == NO_NODE
    assert search.principal_variation(node) == [int(tree.ti[T_MOVE, node])]
    tree.ti[T_FIRST, node] = tree.ti.shape[1] - 2
    assert tree.children(node) == range(tree.ti.shape[1] - 2, tree.ti.shape[1])


def test_node_bytes_and_memory_sizes():
    """The memory cap in bytes (--max-memory) counts engine/tree.py's node
    layout twice (the reuse pool)."""
    from engine.config import NODE_BYTES, SearchConfig, nodes_for_memory, parse_bytes
    from engine.tree import N_FLOAT, N_INT
    assert NODE_BYTES == 4 * N_INT + 4 * N_FLOAT
    assert [parse_bytes(t) for t in ("2G", "512m", "1.5G", "300000", "64MB", "1T")] == [
        2 << 30, 512 << 20, 3 << 29, 300000, 64 << 20, 1 << 40]
    for bad in ("", "G", "-1G", "0", "two", "nanG", "1X"):
        with pytest.raises(ValueError, match="not a size"):
            parse_bytes(bad)
    assert nodes_for_memory(2 << 30) == SearchConfig().max_nodes == 17_895_697
