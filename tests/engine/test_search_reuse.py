"""Tree reuse across moves must never let a thread allocate over live nodes
(arenas granted before a compaction index the old pool)."""

from engine.board import Board
from engine.config import SearchConfig
from engine.patterns import load_gammas
from engine.search import Search
from engine.tree import ROOT, T_FIRST, T_MOVE, T_NCHILD, T_PARENT


def reachable_blocks(tree):
    ti = tree.ti
    blocks, stack = [], [ROOT]
    while stack:
        node = stack.pop()
        n = int(ti[T_NCHILD, node])
        if n:
            first = int(ti[T_FIRST, node])
            blocks.append((first, first + n, node))
            stack.extend(range(first, first + n))
    return blocks


def assert_tree_sound(tree):
    ti = tree.ti
    blocks = sorted(reachable_blocks(tree))
    for (a0, a1, _), (b0, _, _) in zip(blocks, blocks[1:]):
        assert a1 <= b0, "two children blocks overlap"
    for first, end, parent in blocks:
        assert 0 < first and end <= tree.used
        assert all(ti[T_PARENT, i] == parent for i in range(first, end))
        moves = [int(ti[T_MOVE, i]) for i in range(first, end)]
        assert len(set(moves)) == len(moves)


def test_reuse_over_a_game_keeps_the_tree_sound():
    search = Search(SearchConfig(expand_visits=2), load_gammas(), threads=2, seed=3)
    board = Board(7)
    for _ in range(12):
        result = search.run(board, 7.5, max_sims=600)
        assert_tree_sound(search.tree)
        board.play(result.move, board.to_move)
        search.advance(result.move, board)
        assert_tree_sound(search.tree)
        assert search.tree.tf[0, ROOT] > 0 or result.move < 0
