"""Tree reuse across moves must never let a thread allocate over live nodes
(arenas handed out before a compaction index the old pool)."""

from engine.board import Board
from engine.config import SearchConfig
from engine.patterns import load_gammas
from engine.search import Search
from engine.tree import F_VISITS, ROOT
from tree_checks import structure_problems


def test_reuse_over_a_game_keeps_the_tree_sound():
    search = Search(SearchConfig(expand_visits=2), load_gammas(), threads=2, seed=3)
    board = Board(7)
    for _ in range(12):
        result = search.run(board, 7.5, max_sims=600)
        assert structure_problems(search.tree, board) == []
        board.play(result.move, board.to_move)
        search.advance(result.move, board)
        assert structure_problems(search.tree, board) == []
        assert search.tree.tf[F_VISITS, ROOT] > 0 or result.move < 0
