"""Invariants of the tree the search builds (engine/tree.py), over every
node reachable from the root, for the tree tests.

* structure: every node's edge block lies inside [0, tree.edges_used),
  blocks of different nodes do not overlap, no move appears twice among a
  node's edges, every child node lies inside [1, tree.used), is reached
  once, points back to the node whose edge holds it and has that edge's
  move, an UNEXPANDED node has no edges, and the root's moves are legal;
* statistics (after ``run`` returned, so no simulation is in flight): every
  node's virtual loss is back to 0, and a node has at least as many visits
  as its children together (a node is visited once before it is expanded,
  and every visit of a child went through it).
"""

from __future__ import annotations

from engine.board import Board
from engine.tree import (EI_MOVE, EI_NODE, F_VISITS, NO_NODE, ROOT, T_FIRST, T_MOVE,
                         T_NCHILD, T_PARENT, T_STATE, T_VLOSS, UNEXPANDED, Tree)


def reachable(tree: Tree) -> list[int]:
    """Every node reachable from the root (depth first), each once even
    where a corrupted tree would reach it twice."""
    ti, ei = tree.ti, tree.ei
    out, seen, stack = [], set(), [ROOT]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        out.append(node)
        n, first = int(ti[T_NCHILD, node]), int(ti[T_FIRST, node])
        if n > 0 and 0 <= first and first + n <= ei.shape[1]:
            stack.extend(int(c) for c in ei[EI_NODE, first:first + n]
                         if 0 < c < ti.shape[1])
    return out


def structure_problems(tree: Tree, board: Board | None = None) -> list[str]:
    ti, ei = tree.ti, tree.ei
    problems = []
    blocks = []
    parent_of: dict[int, int] = {}
    for node in reachable(tree):
        n, first = int(ti[T_NCHILD, node]), int(ti[T_FIRST, node])
        if n == 0:
            continue
        if not (0 <= first and first + n <= tree.edges_used):
            problems.append(f"node {node}: edge block {first}..{first + n - 1} "
                            f"outside [0, {tree.edges_used})")
            continue
        if ti[T_STATE, node] == UNEXPANDED:
            problems.append(f"node {node}: has edges but is UNEXPANDED")
        blocks.append((first, first + n))
        moves = ei[EI_MOVE, first:first + n].tolist()
        if len(set(moves)) != n:
            problems.append(f"node {node}: a move appears twice among its edges")
        for k in range(first, first + n):
            c = int(ei[EI_NODE, k])
            if c == NO_NODE:
                continue
            if not 0 < c < tree.used:
                problems.append(f"edge {k}: child {c} outside [1, {tree.used})")
            elif c in parent_of:
                problems.append(f"node {c}: child of {parent_of[c]} and of {node}")
            else:
                parent_of[c] = node
                if ti[T_PARENT, c] != node:
                    problems.append(f"node {c}: parent {int(ti[T_PARENT, c])}, expected {node}")
                if ti[T_MOVE, c] != ei[EI_MOVE, k]:
                    problems.append(f"node {c}: move {int(ti[T_MOVE, c])}, its edge's "
                                    f"{int(ei[EI_MOVE, k])}")
    blocks.sort()
    for (a0, a1), (b0, b1) in zip(blocks, blocks[1:]):
        if a1 > b0:
            problems.append(f"edge blocks {a0}..{a1 - 1} and {b0}..{b1 - 1} overlap")
    if board is not None:
        for k in tree.edges(ROOT):
            m = int(ei[EI_MOVE, k])
            if not board.is_legal(m, board.to_move):
                problems.append(f"root edge {k}: illegal move {m}")
    return problems


def statistics_problems(tree: Tree) -> list[str]:
    ti, tf = tree.ti, tree.tf
    problems = []
    for node in reachable(tree):
        if ti[T_VLOSS, node] != 0:
            problems.append(f"node {node}: virtual loss {int(ti[T_VLOSS, node])} left")
        below = sum(float(tf[F_VISITS, c]) for c in tree.children(node))
        if below > float(tf[F_VISITS, node]):
            problems.append(f"node {node}: {tf[F_VISITS, node]:.0f} visits < "
                            f"{below:.0f} of its children")
    return problems
