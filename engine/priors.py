"""Delayed prior knowledge (Maddison et al. 2015, section 6; design.md §5):
the first-in-first-out road from the search threads to the network worker
and back into the tree.  No torch here: the worker (nets/worker.py) only
calls :meth:`PriorQueue.take` and :meth:`PriorQueue.deliver`.

The road a node takes::

    EXPANDED --(search thread: planes into its ring)--> NN_PENDING
             --(publish: FIFO, generation, time)--> take --> network
             --> deliver: priors written by move, then NN_READY

1. A search thread that walks through an EXPANDED node other than the root
   with at least ``nn_visits`` visits computes the node's input planes
   (engine/features, on the board it has in hand at that moment) into a
   free slot of its own request ring, marks the node NN_PENDING and lists
   the slot as fresh (kernel :func:`request`, called inside the simulation
   kernel; nothing allocated).  A full ring defers the node: it stays
   EXPANDED and is asked for again on a later visit.
2. Between kernel batches (every ``SearchConfig.batch`` simulations, a few
   ms) the same thread hands its fresh slots to the queue (:meth:`publish`)
   stamped with the search generation and the time.  The FIFO order is the
   order of publication.
3. The worker takes the oldest requests (:meth:`take`), runs the network and
   hands back probabilities, and with a value network the probability that
   the player to move wins (:meth:`deliver`; delayed values).  A reply whose generation is
   not the search's current one (the position changed: play, undo,
   clear_board, loadsgf, or a tree reuse that moved the nodes) is dropped
   and counted.  A current reply is written into the node's children *by
   move* (kernel :func:`write_policy`) and only then is the node flipped to
   NN_READY, so no search thread reads half-written priors.  Its value, if
   any, is then added to the node and its ancestors (engine/tree.add_value):
   once, since a node is NN_PENDING once, and never to another tree, since
   the generation check guards it as it guards the priors.

Back-pressure: the queue's bound is ``limit`` requests (a few batches).
While more are waiting, the visit threshold for asking (``nn_visits`` in
the kernels' parameter vector) doubles at each publication, up to
``NN_VISITS_MAX``; when the queue has drained below a quarter of the bound
it halves back towards the configured value.  Requests arriving while the
queue holds twice the bound are dropped at once (the node goes back to
EXPANDED, keeps its heuristic priors and may be asked for again) and
counted.  A node that two threads' kernels asked for at once (each saw
it EXPANDED before the other marked it NN_PENDING) is requested once: the
later request is merged (counted apart, not dropped), also when the
first one's reply has already arrived.  So the search never
waits for the network; the network spends its
time on the nodes the search visits most.
"""

from __future__ import annotations

import collections
import threading
import time

import numpy as np
from numba import njit

from engine.board import PASS, S_TO_MOVE
from engine.features import HISTORY_USED, N_PLANES, compute_planes, make_scratch
from engine.tree import (EF_PRIOR_N, EF_PRIOR_W, EI_MOVE, EXPANDED, NN_PENDING,
                         NN_READY, T_STATE, add_value, child_block)

RING = 64                 # request slots per search thread
NN_VISITS_MAX = 1 << 12   # the back-pressure threshold never goes above this

# ring state (int64 array per thread)
R_NFRESH, R_CURSOR = range(2)

_NO_VALUES = np.zeros(0, np.float32)    # write_replies' values for a network without a value head


@njit(nogil=True, cache=True, _nrt=False)
def request(ti, node, b, s, zob, seq, depth, root_hist, hist, rank,
            rplanes, rnode, rcolor, rbusy, rfresh, rstate, sb, ss):
    """Ask for the network's priors of ``node``, whose position is (b, s),
    reached by ``seq[:depth]`` from the root (root_hist: the moves before
    the root, most recent first).  False when the ring is full."""
    nslots = rbusy.shape[0]
    cur = rstate[R_CURSOR]
    slot = -1
    for k in range(nslots):
        j = (cur + k) % nslots
        if rbusy[j] == 0:
            slot = j
            break
    if slot < 0:
        return False
    for t in range(hist.shape[0]):
        d = depth - 1 - t
        if d >= 0:
            hist[t] = seq[d]
        elif t - depth < root_hist.shape[0]:
            hist[t] = root_hist[t - depth]
        else:
            hist[t] = PASS
    compute_planes(b, s, zob, hist, rank, rplanes[slot], sb, ss)
    rnode[slot] = node
    rcolor[slot] = s[S_TO_MOVE]
    rbusy[slot] = 1
    ti[T_STATE, node] = NN_PENDING
    rfresh[rstate[R_NFRESH]] = slot
    rstate[R_NFRESH] += 1
    rstate[R_CURSOR] = (slot + 1) % nslots
    return True


@njit(nogil=True, cache=True, _nrt=False)
def move_prob(probs, m, w, n):
    """The network's probability of tree move ``m`` (a point of the padded
    board, or PASS), or -1 where it has none (a pass, to a network with no
    pass output: probs of n * n entries, not n * n + 1)."""
    if w <= m < w * w - w:
        return probs[(m // w - 1) * n + m % w - 1]
    if m == PASS and probs.shape[0] > n * n:
        return probs[n * n]
    return -1.0


@njit(nogil=True, cache=True, _nrt=False)
def write_policy(ti, ei, ef, node, probs, w, n, equiv):
    """Write the network's move probabilities ``probs`` (n * n, row 0 at
    the top, and the pass at n * n for a network with a pass output) into
    the edges of ``node`` as prior experience, matched by each edge's
    move, then publish NN_READY.  A child's value is sqrt(p / p_best) (the
    best move 1, a move the network gives a hundredth of the best 0.1),
    worth ``equiv`` visits, added to the heuristic prior; a pass, to a
    network without a pass output, keeps its heuristic prior alone (the
    displays read the root's probabilities from the network: Search's
    root_policy)."""
    if ti[T_STATE, node] != NN_PENDING:
        return False
    first, nc = child_block(ti, ei, node)
    best = 0.0
    for k in range(first, first + nc):
        p = move_prob(probs, ei[EI_MOVE, k], w, n)
        if p > best:
            best = p
    if best > 0.0:
        for k in range(first, first + nc):
            p = move_prob(probs, ei[EI_MOVE, k], w, n)
            if p >= 0.0:
                ef[EF_PRIOR_N, k] += equiv
                ef[EF_PRIOR_W, k] += equiv * np.sqrt(p / best)
    ti[T_STATE, node] = NN_READY
    return True


@njit(nogil=True, cache=True, _nrt=False)
def write_replies(ti, tf, ei, ef, nodes, probs, values, w, n, equiv, written):
    """A batch of replies in one call: :func:`write_policy` for each row k
    (node ``nodes[k]``, -1 for a stale reply; probabilities ``probs[k]``),
    then, where ``values`` has a row k (a value network), add_value of
    ``values[k]`` to the node and its ancestors.  ``written[k]`` says
    whether reply k reached the tree; returns how many did.  One call per
    batch: each call of a numba function from Python gives up the GIL and
    takes it back, which costs a wait per call when many search threads
    want it."""
    count = 0
    for k in range(nodes.shape[0]):
        written[k] = 0
        node = nodes[k]
        if node >= 0 and write_policy(ti, ei, ef, node, probs[k], w, n, equiv):
            written[k] = 1
            count += 1
            if k < values.shape[0]:
                add_value(ti, tf, node, values[k])
    return count


class Ring:
    """One search thread's request slots, allocated once per board size."""

    def __init__(self, size: int = 1):
        self.size = -1
        self.rnode = np.zeros(RING, np.int32)
        self.rcolor = np.zeros(RING, np.int32)
        self.rbusy = np.zeros(RING, np.uint8)
        self.rfresh = np.zeros(RING, np.int32)
        self.rstate = np.zeros(2, np.int64)
        self.hist = np.zeros(HISTORY_USED, np.int32)
        self.resize(size)

    def resize(self, size: int) -> None:
        if size != self.size:
            self.size = size
            self.rplanes = np.zeros((RING, N_PLANES, size, size), np.uint8)
            self.sb, self.ss = make_scratch(max(size, 2))
        self.reset()

    def reset(self) -> None:
        self.rbusy[:] = 0
        self.rstate[:] = 0


class PriorStats:
    """What the queue saw since the last ``reset`` (one genmove)."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.requested = 0       # requests published
        self.evaluated = 0       # replies written into the tree
        self.valued = 0          # of those, with a value
        self.stale = 0           # replies dropped: the position had changed
        self.overflow = 0        # requests dropped at once: queue past twice its bound
        self.merged = 0          # requests of a node already waiting (a race of two threads)
        self.batches = 0         # network calls of the worker
        self.positions = 0       # positions in those calls
        self.lags: list[float] = []   # seconds from publication to priors in the tree

    @property
    def dropped(self) -> int:
        return self.stale + self.overflow

    def lag_ms(self, q: float) -> float:
        return 1000.0 * float(np.quantile(self.lags, q)) if self.lags else 0.0


class PriorQueue:
    """The FIFO between the search threads and the network worker.

    ``tree_lock`` is held while replies are written into the tree and while
    the search reshapes the tree (clear, reroot): a reply is either written
    before the change, to the nodes it asked for, or dropped after it."""

    def __init__(self, tree, limit: int = 512, equiv: float = 40.0):
        self.tree = tree
        self.rings: list[Ring] = []
        self.limit = limit
        self.equiv = equiv
        self.generation = 0
        self.tree_lock = threading.Lock()
        self._items: collections.deque = collections.deque()
        self._waiting: set[int] = set()   # nodes requested and not yet answered (this generation)
        self._cv = threading.Condition()
        self._closed = False
        self.size = 0
        self.stats = PriorStats()
        self.params = None            # the running search's parameter vector
        self.komi = 0.0               # the running search's komi (a value network's input)
        self.base_visits = 0.0
        self.nn_visits_index = -1

    # search side ---------------------------------------------------------
    def new_generation(self, size: int | None = None) -> None:
        """The tree's node indices changed meaning (called while no search
        runs): drop what is waiting, free every slot, and make the replies
        in flight stale."""
        with self._cv, self.tree_lock:
            self.generation += 1
            self.stats.stale += len(self._items)
            self._items.clear()
            self._waiting.clear()
            for ring in self.rings:
                if size is not None:
                    ring.resize(size)
                else:
                    ring.reset()
            if size is not None:
                self.size = size        # under the lock: take() reads it there

    def attach(self, params: np.ndarray, index: int, size: int, komi: float = 0.0) -> None:
        """A search of a board of ``size`` and ``komi`` starts with kernel
        parameters ``params`` (whose entry ``index`` is the visit threshold
        the back-pressure moves); called while no search thread runs.  A
        new komi makes the values in flight stale, as a new position does."""
        if size != self.size or komi != self.komi:
            self.new_generation(size)
        self.komi = float(komi)
        self.params, self.nn_visits_index = params, index
        self.base_visits = float(params[index])

    def publish(self, ring: Ring) -> None:
        """Hand a thread's fresh requests to the queue (after its kernel batch)."""
        k = int(ring.rstate[R_NFRESH])
        if k == 0:
            return
        ring.rstate[R_NFRESH] = 0
        now = time.perf_counter()
        gen = self.generation
        with self._cv:
            for slot in ring.rfresh[:k]:
                slot = int(slot)
                node = int(ring.rnode[slot])
                if node in self._waiting or self.tree.ti[T_STATE, node] == NN_READY:
                    # two threads' kernels asked for the node at once (each
                    # saw it EXPANDED): one request is enough, whether the
                    # first is still waiting or its reply has already come
                    # (a thread publishes after its kernel batch, which can
                    # outlast the network's round trip)
                    ring.rbusy[slot] = 0
                    self.stats.merged += 1
                    continue
                if len(self._items) >= 2 * self.limit:
                    ring.rbusy[slot] = 0
                    if self.tree.ti[T_STATE, node] == NN_PENDING:
                        self.tree.ti[T_STATE, node] = EXPANDED
                    self.stats.overflow += 1
                    continue
                self._items.append((gen, ring, slot, node, now))
                self._waiting.add(node)
                self.stats.requested += 1
            self._pressure(len(self._items))
            self._cv.notify()

    def _pressure(self, depth: int) -> None:
        p, i = self.params, self.nn_visits_index
        if p is None:
            return
        if depth > self.limit:
            p[i] = min(max(2.0 * p[i], 1.0), NN_VISITS_MAX)
        elif depth < self.limit // 4 and p[i] > self.base_visits:
            p[i] = max(p[i] / 2.0, self.base_visits)

    def depth(self) -> int:
        return len(self._items)

    def unanswered(self) -> int:
        """Requests of this generation whose replies have not been written
        (waiting in the queue or in the worker's hands)."""
        with self._cv:
            return len(self._waiting)

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed

    # worker side ---------------------------------------------------------
    def take(self, planes: np.ndarray, colors: np.ndarray, max_wait: float,
             idle_wait: float = 0.05):
        """Fill ``planes``/``colors`` (preallocated, first dimension the
        batch size) with the oldest requests and return their tickets.

        Batching policy: wait up to ``idle_wait`` for a first request; then,
        if fewer than a full batch are waiting, wait at most ``max_wait``
        for more before going with what there is.  A GPU wants full batches;
        a CPU worker gains little from them, so its caller passes a short
        ``max_wait``.  Returns [] when nothing came (or the queue closed)."""
        cap = planes.shape[0]
        with self._cv:
            if not self._items and not self._closed:
                self._cv.wait(idle_wait)
            if self._items and len(self._items) < cap and max_wait > 0 and not self._closed:
                self._cv.wait_for(lambda: len(self._items) >= cap or self._closed, max_wait)
            if self._closed:
                return []
            if planes.shape[-1] != self.size:
                return []               # the board size changed (even while waiting)
            # copied and freed under the lock: new_generation cannot hand
            # a slot to a new request while its old planes are being read
            tickets = []
            n = self.size
            while self._items and len(tickets) < cap:
                gen, ring, slot, node, t = self._items.popleft()
                if gen == self.generation and ring.rplanes.shape[-1] == n:
                    k = len(tickets)
                    planes[k, :, :n, :n] = ring.rplanes[slot]
                    colors[k] = ring.rcolor[slot]
                    tickets.append((gen, node, t))
                else:
                    self.stats.stale += 1
                ring.rbusy[slot] = 0
            self._pressure(len(self._items))
        return tickets

    def deliver(self, tickets, probs: np.ndarray, values: np.ndarray | None = None) -> None:
        """Write the replies of ``take``'s tickets (probs row k for ticket
        k; values[k], the probability that its player to move wins, where
        the network has a value head)."""
        tree = self.tree
        done = time.perf_counter()
        k = len(tickets)
        written = np.zeros(k, np.uint8)
        vals = _NO_VALUES if values is None else np.asarray(values[:k], np.float32)
        with self.tree_lock:
            gen = self.generation
            nodes = np.array([node if g == gen else -1 for g, node, _ in tickets], np.int64)
            ti, tf, ei, ef = tree.arrays
            count = write_replies(ti, tf, ei, ef, nodes, np.asarray(probs[:k], np.float32),
                                  vals, self.size + 2, self.size, self.equiv, written)
        self.stats.evaluated += count
        self.stats.stale += k - count
        if values is not None:
            self.stats.valued += count
        self.stats.lags.extend(done - t for (_, _, t), ok in zip(tickets, written) if ok)
        self.stats.batches += 1
        self.stats.positions += len(tickets)
        # last, so that unanswered() == 0 means the replies and their counts are in
        with self._cv:
            self._waiting.difference_update(int(v) for v in nodes if v >= 0)


def root_planes(board, history, rank: int) -> np.ndarray:
    """The (1, N_PLANES, n, n) planes of the root, for its synchronous
    evaluation."""
    from engine.features import planes
    return planes(board, history, rank, dtype=np.uint8)[None]


def symmetry(x: np.ndarray, k: int) -> np.ndarray:
    """Symmetry k (0..7) of the board planes' last two axes: k % 4 quarter
    turns, then a mirror image for k >= 4."""
    x = np.rot90(x, k % 4, axes=(-2, -1))
    return x[..., ::-1] if k >= 4 else x


def symmetry_inverse(x: np.ndarray, k: int) -> np.ndarray:
    """The inverse of :func:`symmetry`."""
    if k >= 4:
        x = x[..., ::-1]
    return np.rot90(x, -(k % 4), axes=(-2, -1))


def symmetric_probabilities(network, planes: np.ndarray, color: int, n: int,
                            komi: float | None = None):
    """The mean over the board's 8 symmetries of ``network``'s probabilities
    for the one position of ``planes`` (1, N_PLANES, n, n): the 8 images
    go in one batch, each row is mapped back onto the board and the rows
    are averaged (a pass column, where the network has one, averaged as it
    is).  A test-time ensemble of the network with itself: the rotations
    and mirror images of a position are the same position, which the
    network, trained on random symmetries, judges a little differently in
    each.  With ``komi``, ``network`` is a value network (planes, colours,
    komi) -> (probabilities, values), and the answer is the pair
    (probabilities, the mean of the 8 values) from the same batch."""
    batch = np.ascontiguousarray(np.stack([symmetry(planes[0], k) for k in range(8)]))
    colors = np.full(8, color, np.int32)
    if komi is None:
        probs, values = network(batch, colors), None
    else:
        probs, values = network(batch, colors, komi)
    probs = np.asarray(probs, np.float64)
    out = np.zeros(probs.shape[1], np.float64)
    for k in range(8):
        out[:n * n] += symmetry_inverse(probs[k, :n * n].reshape(n, n), k).reshape(-1)
        out[n * n:] += probs[k, n * n:]
    out = (out / 8).astype(np.float32)
    return out if komi is None else (out, float(np.mean(values)))


__all__ = ["RING", "NN_VISITS_MAX", "Ring", "PriorQueue", "PriorStats", "move_prob", "request",
           "write_policy", "write_replies", "root_planes", "symmetry", "symmetry_inverse",
           "symmetric_probabilities"]
