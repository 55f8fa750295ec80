"""The search tree: a preallocated node pool as a structure of arrays.

Every node's children sit in one contiguous block (``first .. first+n-1``),
allocated at once when the node is expanded.  Integer fields live in ``ti``
(int32, one row per field), statistics in ``tf`` (float32; F_POLICY holds
the network's probability of the move once its parent is NN_READY).  A node's wins
count for the colour that played its move.

Two kinds of statistics are kept apart (AlphaGo's N_r, W_r and N_v, W_v):
the rollouts' (F_VISITS, F_WINS) and the value network's (F_VALUE_N,
F_VALUE_W).  A node's value statistics sum the network's judgements of the
positions evaluated in its subtree, each added once when it arrives
(:func:`add_value`), from the side of the colour that played the node's
move.

Node states (design.md §4)::

    UNEXPANDED -> EXPANDED (heuristic priors) -> NN_PENDING -> NN_READY

A thread claims a node by writing EXPANDING, fills the children block and
only then publishes ``first``/``n`` and EXPANDED, so readers never see half
a block.  Two threads may race for the same claim (numba has no CPU atomics);
the loser's block is simply never published, a bounded waste the pool
tolerates (Fuego's lock-free scheme).

Allocation is per thread from arenas: ``arena = [next, end)`` granted by the
Python side between kernel calls, so no two threads ever write the same
fresh nodes.  When the pool is spent no arena is granted and the search goes
on without expanding (the memory cap's defined behaviour).
"""

from __future__ import annotations

import threading

import numpy as np
from numba import njit

# integer fields
T_MOVE, T_PARENT, T_FIRST, T_NCHILD, T_STATE, T_VLOSS = range(6)
N_INT = 6
# float fields
F_VISITS, F_WINS, F_AMAF_N, F_AMAF_W, F_PRIOR_N, F_PRIOR_W, F_POLICY, F_VALUE_N, F_VALUE_W = range(9)
N_FLOAT = 9

UNEXPANDED, EXPANDING, EXPANDED, NN_PENDING, NN_READY = range(5)
NO_NODE = -1
ROOT = 0


@njit(nogil=True, cache=True, _nrt=False)
def init_node(ti, tf, i, move, parent):
    ti[T_MOVE, i] = move
    ti[T_PARENT, i] = parent
    ti[T_FIRST, i] = NO_NODE
    ti[T_NCHILD, i] = 0
    ti[T_STATE, i] = UNEXPANDED
    ti[T_VLOSS, i] = 0
    for f in range(tf.shape[0]):
        tf[f, i] = 0.0


@njit(nogil=True, cache=True, _nrt=False)
def child_block(ti, node):
    """(first, n) of ``node``'s children, clamped to the pool, so that a
    scan of them stays inside it whatever a corrupted node says."""
    first = ti[T_FIRST, node]
    n = ti[T_NCHILD, node]
    if first <= 0 or n <= 0:
        return 0, 0
    return first, min(n, ti.shape[1] - first)


@njit(nogil=True, cache=True, _nrt=False)
def add_value(ti, tf, node, value):
    """The network judged ``node``'s position: the player to move there wins
    with probability ``value``.  Add it to the value statistics of the node
    and of every ancestor up to the root, each from the side of the colour
    that played into it (the node's mover gets 1 - value, its parent's
    mover value, and so on).  Returns the number of nodes updated; the walk
    is bounded by the pool's size, whatever a corrupted parent link says."""
    win = 1.0 - value
    i = node
    count = 0
    while 0 <= i < ti.shape[1] and count < ti.shape[1]:
        tf[F_VALUE_N, i] += 1.0
        tf[F_VALUE_W, i] += win
        win = 1.0 - win
        count += 1
        if i == ROOT:
            break
        i = ti[T_PARENT, i]
    return count


@njit(nogil=True, cache=True)
def copy_subtree(si, sf, root, di, df):
    """Copy the subtree under ``root`` of pool (si, sf) into pool (di, df)
    with ``root`` at index 0, children blocks kept contiguous.  Returns the
    number of nodes used (breadth-first, so a queue over di's own indices)."""
    for f in range(si.shape[0]):
        di[f, 0] = si[f, root]
    for f in range(sf.shape[0]):
        df[f, 0] = sf[f, root]
    di[T_PARENT, 0] = NO_NODE
    src_of = np.empty(di.shape[1], np.int32)   # one allocation per move, not per simulation
    src_of[0] = root
    used = 1
    head = 0
    cap = di.shape[1]
    while head < used:
        s = src_of[head]
        first, n = child_block(si, s)
        if n > 0 and used + n <= cap:
            di[T_FIRST, head] = used
            for k in range(n):
                for f in range(si.shape[0]):
                    di[f, used + k] = si[f, first + k]
                for f in range(sf.shape[0]):
                    df[f, used + k] = sf[f, first + k]
                di[T_PARENT, used + k] = head
                src_of[used + k] = first + k
            used += n
        else:
            di[T_FIRST, head] = NO_NODE
            di[T_NCHILD, head] = 0
            if di[T_STATE, head] != UNEXPANDED:
                di[T_STATE, head] = UNEXPANDED
        if di[T_STATE, head] == NN_PENDING:
            di[T_STATE, head] = EXPANDED    # its request is dropped with the old indices
        di[T_VLOSS, head] = 0
        head += 1
    return used


@njit(nogil=True, cache=True)
def settle(ti, tf, used):
    """After the threads stopped: clear leftover virtual losses and restore
    visits(node) >= sum of its children's visits where racing lock-free
    increments lost an update.  Nodes are visited in reverse breadth-first
    order from the root, so every child is settled before its parent."""
    for i in range(used):
        ti[T_VLOSS, i] = 0
    order = np.empty(used, np.int32)     # once per search, not per simulation
    order[0] = ROOT
    end = 1
    head = 0
    while head < end:
        node = order[head]
        head += 1
        first, n = child_block(ti, node)
        for k in range(first, first + n):
            if end < used:
                order[end] = k
                end += 1
    for j in range(end - 1, -1, -1):
        node = order[j]
        first, n = child_block(ti, node)
        if n > 0:
            total = 0.0
            for k in range(first, first + n):
                total += tf[F_VISITS, k]
            if tf[F_VISITS, node] < total:
                tf[F_VISITS, node] = total


class Tree:
    """The pool and its allocator.  Two pools are kept so that tree reuse
    can copy the surviving subtree into the other one (compaction)."""

    def __init__(self, max_nodes: int, chunk: int = 4096):
        if max_nodes < 1024:
            raise ValueError("the tree needs at least 1024 nodes")
        self.max_nodes = max_nodes
        self.chunk = chunk
        self._pools = [(np.zeros((N_INT, max_nodes), np.int32), np.zeros((N_FLOAT, max_nodes), np.float32))
                       for _ in range(2)]
        self._active = 0
        self._lock = threading.Lock()
        self.used = 0
        self.clear()

    @property
    def ti(self) -> np.ndarray:
        return self._pools[self._active][0]

    @property
    def tf(self) -> np.ndarray:
        return self._pools[self._active][1]

    def clear(self) -> None:
        init_node(self.ti, self.tf, ROOT, -1, NO_NODE)
        self.used = 1

    @property
    def full(self) -> bool:
        """No fresh block of nodes is left: the search goes on without
        growing the tree (the memory cap's defined behaviour)."""
        return self.used + self.chunk > self.max_nodes

    def grant(self, arena: np.ndarray) -> bool:
        """Give a thread a fresh block of nodes; False when the pool is full."""
        with self._lock:
            if self.full:
                arena[0] = arena[1] = 0
                return False
            arena[0] = self.used
            arena[1] = self.used + self.chunk
            self.used += self.chunk
            return True

    def reroot(self, child: int) -> None:
        """Make ``child`` the new root, keeping its subtree only."""
        si, sf = self._pools[self._active]
        di, df = self._pools[1 - self._active]
        self.used = int(copy_subtree(si, sf, child, di, df))
        self._active = 1 - self._active

    def child_with_move(self, node: int, move: int) -> int:
        ti = self.ti
        for i in self.children(node):
            if ti[T_MOVE, i] == move:
                return i
        return NO_NODE

    def children(self, node: int = ROOT) -> range:
        """The node's children, read through child_block: an analysis
        snapshot reads them while search threads expand nodes, and a read
        between an expansion's two writes (first, then count) must give no
        children rather than a range starting at NO_NODE."""
        first, n = child_block(self.ti, node)
        return range(int(first), int(first + n)) if n > 0 else range(0)
