"""The search tree: preallocated pools of nodes and edges, structures of arrays.

A node is a position the search has walked into.  Its moves are *edges*:
one contiguous block (``first .. first+n-1``) allocated at once when the
node is expanded, each edge holding what selection reads of a move that
may never be tried (its move, its prior experience, its AMAF statistics)
and the index of the child node, allocated only when a simulation first
walks through the edge (``EI_NODE`` is NO_NODE until then).  An expansion
of a 19x19 position costs about 360 edges of 24 bytes;
of those children only about one in a hundred is ever visited, and only
those become nodes (40 bytes), as Leela Zero and KataGo store children.

Node fields: integers in ``ti`` (int32, one row per field), statistics in
``tf`` (float32).  Edge fields: ``ei`` (int32) and ``ef`` (float32).  A
node's wins count for the colour that played its move; so do its edge's
AMAF wins and prior wins.

Two kinds of node statistics are kept apart (AlphaGo's N_r, W_r and N_v,
W_v): the rollouts' (F_VISITS, F_WINS) and the value network's (F_VALUE_N,
F_VALUE_W).  A node's value statistics sum the network's judgements of the
positions evaluated in its subtree, each added once when it arrives
(:func:`add_value`), from the side of the colour that played the node's
move.

Node states (design.md §4)::

    UNEXPANDED -> EXPANDED (heuristic priors) -> NN_PENDING -> NN_READY

A thread claims a node by writing EXPANDING, fills the edge block and only
then publishes ``first``/``n`` and EXPANDED, so readers never see half a
block.  A child node is published the same way: its fields are written
before the edge points to it.  Two threads may race for the same claim
(numba has no CPU atomics); the loser's block or node is simply never
published (its thread reads the edge again and follows the winner's), a
bounded waste the pools tolerate (Fuego's lock-free scheme).

Allocation is per thread from arenas, one of edges and one of nodes:
``arena = [edge next, edge end, node next, node end)`` topped up by the
Python side before each kernel call (:meth:`Tree.reserve`), so no two
threads ever write the same fresh slots.  A simulation makes at most one
node, so a batch of n simulations that starts with n fresh nodes never
cuts a descent short for want of one.  When a pool is spent the arena gets
nothing more and the search goes on without growing the tree (the memory
cap's defined behaviour).
"""

from __future__ import annotations

import threading

import numpy as np
from numba import njit

from engine.config import MIN_MEMORY

# node fields: integers (T_FIRST, T_NCHILD: the node's block of edges)
T_MOVE, T_PARENT, T_FIRST, T_NCHILD, T_STATE, T_VLOSS = range(6)
N_INT = 6
# node fields: statistics
F_VISITS, F_WINS, F_VALUE_N, F_VALUE_W = range(4)
N_FLOAT = 4
# edge fields: integers, and statistics (the prior experience: heuristic,
# plus the network's once the edge's parent is NN_READY)
EI_MOVE, EI_NODE = range(2)
N_EINT = 2
EF_AMAF_N, EF_AMAF_W, EF_PRIOR_N, EF_PRIOR_W = range(4)
N_EFLOAT = 4

NODE_BYTES = 4 * (N_INT + N_FLOAT)
EDGE_BYTES = 4 * (N_EINT + N_EFLOAT)
EDGES_PER_NODE = 8      # a pool holds one node for this many edges (19x19: ~100 in practice)

# arena slots (each pool's start, then its end)
A_EDGE, A_EDGE_END, A_NODE, A_NODE_END = range(4)

UNEXPANDED, EXPANDING, EXPANDED, NN_PENDING, NN_READY = range(5)
NO_NODE = -1
NO_EDGE = -1
ROOT = 0


@njit(nogil=True, cache=True, _nrt=False)
def init_node(ti, tf, i, move, parent):
    ti[T_MOVE, i] = move
    ti[T_PARENT, i] = parent
    ti[T_FIRST, i] = NO_EDGE
    ti[T_NCHILD, i] = 0
    ti[T_STATE, i] = UNEXPANDED
    ti[T_VLOSS, i] = 0
    for f in range(tf.shape[0]):
        tf[f, i] = 0.0


@njit(nogil=True, cache=True, _nrt=False)
def init_edge(ei, ef, k, move):
    ei[EI_MOVE, k] = move
    ei[EI_NODE, k] = NO_NODE
    for f in range(ef.shape[0]):
        ef[f, k] = 0.0


@njit(nogil=True, cache=True, _nrt=False)
def child_block(ti, ei, node):
    """(first, n) of ``node``'s edges, clamped to the edge pool, so that a
    scan of them stays inside it whatever a corrupted node says."""
    first = ti[T_FIRST, node]
    n = ti[T_NCHILD, node]
    if first < 0 or n <= 0:
        return 0, 0
    return first, max(0, min(n, ei.shape[1] - first))


@njit(nogil=True, cache=True, _nrt=False)
def edge_child(ei, ti, k):
    """The node behind edge ``k`` (NO_NODE where none, or a corrupted index)."""
    c = ei[EI_NODE, k]
    if c <= 0 or c >= ti.shape[1]:
        return NO_NODE
    return c


@njit(nogil=True, cache=True, _nrt=False)
def child_node(ti, tf, ei, k, parent, arena):
    """The node behind edge ``k`` of ``parent``, made from the thread's node
    arena on the first walk through it; NO_NODE when the arena is spent.
    The node is complete before the edge points to it, and the edge is read
    again after the write, so that of two threads racing to make it both
    go on with the one that was published."""
    c = edge_child(ei, ti, k)
    if c != NO_NODE:
        return c
    if arena[A_NODE] >= arena[A_NODE_END]:
        return NO_NODE
    c = arena[A_NODE]
    arena[A_NODE] += 1
    init_node(ti, tf, c, ei[EI_MOVE, k], parent)
    ei[EI_NODE, k] = c
    return edge_child(ei, ti, k)


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
def compact(ti, tf, ei, ef, root, used):
    """Keep only the subtree under node ``root`` (of the ``used`` nodes),
    in place: ``root`` becomes node 0, the other kept nodes and the kept
    edge blocks slide down to the front of their pools in the order they
    had, so that no node or edge is written over before it has been moved
    (the k-th kept node comes from index k or above, and a block from its
    own place or above).  Returns (nodes used, edges used).  Scratch: a few
    integers per node, once per move."""
    new_of = np.full(used, NO_NODE, np.int32)
    order = np.empty(used, np.int32)
    # the subtree, breadth first
    order[0] = root
    new_of[root] = 0
    kept = 1
    head = 0
    while head < kept:
        node = order[head]
        head += 1
        first, n = child_block(ti, ei, node)
        for k in range(first, first + n):
            c = edge_child(ei, ti, k)
            if c != NO_NODE and c < used and new_of[c] == NO_NODE and kept < used:
                new_of[c] = 0           # marked; numbered below
                order[kept] = c
                kept += 1
    # numbers: the root 0, the others in the order of their old indices
    nxt = 1
    for i in range(used):
        if new_of[i] != NO_NODE and i != root:
            new_of[i] = nxt
            nxt += 1
    # edge blocks in the order of their old places, each to the end of the last
    starts = np.empty(kept, np.int64)
    for j in range(kept):
        first, n = child_block(ti, ei, order[j])
        starts[j] = first if n > 0 else -1
    by_place = np.argsort(starts)
    new_first = np.full(kept, NO_EDGE, np.int64)
    edges = 0
    for j in by_place:
        if starts[j] < 0:
            continue
        first, n = child_block(ti, ei, order[j])
        for k in range(n):
            for f in range(ei.shape[0]):
                ei[f, edges + k] = ei[f, first + k]
            for f in range(ef.shape[0]):
                ef[f, edges + k] = ef[f, first + k]
            c = edge_child(ei, ti, edges + k)
            ei[EI_NODE, edges + k] = new_of[c] if c != NO_NODE and c < used else NO_NODE
        new_first[j] = edges
        edges += n
    # nodes: the root first (over the old root, which is not kept), then the rest
    first_of = np.empty(used, np.int64)     # new edge block by old node index
    parent_of = np.empty(used, np.int32)
    for j in range(kept):
        i = order[j]
        first_of[i] = new_first[j]
        p = ti[T_PARENT, i]
        parent_of[i] = new_of[p] if i != root and 0 <= p < used else NO_NODE
    for i in range(-1, used):
        src = root if i < 0 else i
        if i == root or new_of[src] == NO_NODE:
            continue
        dst = new_of[src]
        for f in range(ti.shape[0]):
            ti[f, dst] = ti[f, src]
        for f in range(tf.shape[0]):
            tf[f, dst] = tf[f, src]
        ti[T_PARENT, dst] = parent_of[src]
        ti[T_FIRST, dst] = first_of[src]
        if first_of[src] == NO_EDGE:
            ti[T_NCHILD, dst] = 0
            if ti[T_STATE, dst] != UNEXPANDED:
                ti[T_STATE, dst] = UNEXPANDED   # a block it claimed but never published
        if ti[T_STATE, dst] == NN_PENDING:
            ti[T_STATE, dst] = EXPANDED     # its request is dropped with the old indices
        ti[T_VLOSS, dst] = 0
    return kept, edges


@njit(nogil=True, cache=True)
def settle(ti, tf, ei, used):
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
        first, n = child_block(ti, ei, node)
        for k in range(first, first + n):
            c = edge_child(ei, ti, k)
            if c != NO_NODE and end < used:
                order[end] = c
                end += 1
    for j in range(end - 1, -1, -1):
        node = order[j]
        first, n = child_block(ti, ei, node)
        if n > 0:
            total = 0.0
            for k in range(first, first + n):
                c = edge_child(ei, ti, k)
                if c != NO_NODE:
                    total += tf[F_VISITS, c]
            if tf[F_VISITS, node] < total:
                tf[F_VISITS, node] = total


def pool_sizes(max_memory: int) -> tuple[int, int]:
    """(nodes, edges) that ``max_memory`` bytes of pools hold."""
    edges = max_memory // (EDGE_BYTES + NODE_BYTES // EDGES_PER_NODE)
    return edges // EDGES_PER_NODE, edges


def _top_up(arena: np.ndarray, slot: int, want: int, used: int, chunk: int,
            cap: int) -> tuple[int, bool]:
    """Make ``arena[slot:slot + 2]`` (start, end) hold at least ``want``
    fresh slots of a pool of ``cap`` of which ``used`` are handed out.  A
    range that ends where the pool's handed-out part ends grows in place;
    another is replaced by a fresh range (its few slots left are dropped).
    Either takes at least a ``chunk``.  Returns (used after, True), or
    (used, False) with the arena as it was when the pool cannot give it."""
    start, end = int(arena[slot]), int(arena[slot + 1])
    have = end - start
    if have >= want:
        return used, True
    if end == used:
        grown = used + max(chunk, want - have)
        if grown > cap:
            return used, False
        arena[slot + 1] = grown
        return grown, True
    size = max(chunk, want)
    if used + size > cap:
        return used, False
    arena[slot], arena[slot + 1] = used, used + size
    return used + size, True


class Tree:
    """The pools and their allocator: ``max_memory`` bytes of nodes and
    edges.  Tree reuse compacts the kept subtree in place (:func:`compact`),
    so the pools are all the memory the tree takes."""

    def __init__(self, max_memory: int, edge_chunk: int = 4096, node_chunk: int = 512):
        if max_memory < MIN_MEMORY:
            raise ValueError(f"the tree needs at least {MIN_MEMORY >> 20} MiB, got {max_memory} bytes")
        self.max_memory = max_memory
        self.max_nodes, self.max_edges = pool_sizes(max_memory)
        self.edge_chunk = min(edge_chunk, self.max_edges // 8)
        self.node_chunk = min(node_chunk, self.max_nodes // 8)
        self.arrays = (np.zeros((N_INT, self.max_nodes), np.int32),
                       np.zeros((N_FLOAT, self.max_nodes), np.float32),
                       np.zeros((N_EINT, self.max_edges), np.int32),
                       np.zeros((N_EFLOAT, self.max_edges), np.float32))
        self.ti, self.tf, self.ei, self.ef = self.arrays
        self._lock = threading.Lock()
        self.used = 0           # nodes handed out (arenas included)
        self.edges_used = 0
        self.clear()

    @property
    def bytes_used(self) -> int:
        """Bytes of the pools handed out (arenas included)."""
        return self.used * NODE_BYTES + self.edges_used * EDGE_BYTES

    def clear(self) -> None:
        init_node(self.ti, self.tf, ROOT, -1, NO_NODE)
        self.used = 1
        self.edges_used = 0

    @property
    def full(self) -> bool:
        """No fresh block of edges or nodes is left: the search goes on
        without growing the tree (the memory cap's defined behaviour)."""
        return (self.edges_used + self.edge_chunk > self.max_edges
                or self.used + self.node_chunk > self.max_nodes)

    def reserve(self, arena: np.ndarray, nodes: int, edges: int) -> bool:
        """Make a thread's arena hold at least ``nodes`` fresh nodes and
        ``edges`` fresh edges before a kernel call (:func:`_top_up`); False
        when a pool is spent (the arena keeps what it has left)."""
        if (arena[A_NODE_END] - arena[A_NODE] >= nodes
                and arena[A_EDGE_END] - arena[A_EDGE] >= edges):
            return True
        with self._lock:
            self.edges_used, edges_ok = _top_up(arena, A_EDGE, edges, self.edges_used,
                                                self.edge_chunk, self.max_edges)
            self.used, nodes_ok = _top_up(arena, A_NODE, nodes, self.used, self.node_chunk,
                                          self.max_nodes)
            return edges_ok and nodes_ok

    def reroot(self, child: int) -> None:
        """Make node ``child`` the new root, keeping its subtree only."""
        used, edges = compact(*self.arrays, child, self.used)
        self.used, self.edges_used = int(used), int(edges)

    def edges(self, node: int = ROOT) -> range:
        """The node's edges, read through child_block: an analysis snapshot
        reads them while search threads expand nodes, and a read between an
        expansion's two writes (first, then count) must give no edges rather
        than a range starting at NO_EDGE."""
        first, n = child_block(self.ti, self.ei, node)
        return range(int(first), int(first + n)) if n > 0 else range(0)

    def child(self, edge: int) -> int:
        """The node behind ``edge``, or NO_NODE where no simulation went there."""
        return int(edge_child(self.ei, self.ti, edge))

    def children(self, node: int = ROOT) -> list[int]:
        """The nodes of the node's edges that simulations walked into."""
        return [c for c in (self.child(k) for k in self.edges(node)) if c != NO_NODE]

    def child_with_move(self, node: int, move: int) -> int:
        ei = self.ei
        for k in self.edges(node):
            if ei[EI_MOVE, k] == move:
                return self.child(k)
        return NO_NODE

    def edge_visits(self, node: int = ROOT) -> np.ndarray:
        """Visits of each of the node's edges (0 where no node is behind it)."""
        r = self.edges(node)
        kids = self.ei[EI_NODE, r.start:r.stop]
        ok = (kids > 0) & (kids < self.ti.shape[1])
        return np.where(ok, self.tf[F_VISITS, np.where(ok, kids, 0)], 0.0)
