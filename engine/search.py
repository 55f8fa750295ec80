"""UCT + RAVE Monte-Carlo tree search over the node pool of engine/tree.py.

One simulation: copy the root board into the thread's scratch board, descend
the tree choosing children by UCT+RAVE (virtual loss keeps threads apart;
where the value network has judged a child's subtree, its value mean is
mixed into the rollouts' estimate, see :func:`select_child`),
expand the leaf once it has enough visits (children get heuristic priors as
equivalent experience), finish the game with the pattern rollout policy,
score it (Tromp-Taylor area, komi), and back the result up the path with
AMAF updates for every sibling whose move the same colour played later.

Threads (tree parallelism): each search thread calls ``simulate`` for a small
batch of simulations with the GIL released and returns; counting, stopping
and arena top-ups happen in Python between batches.  Statistics races
between threads are tolerated (Fuego's lock-free scheme).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from engine.board import (BLACK, COLOR, EMPTIES, EMPTY, HEAD, LIBS, PASS, S_N,
                          S_NEMPTY, S_PASSES, S_TO_MOVE, S_W, WHITE, ZOBRIST,
                          Board, area_fill, copy_board, is_eyeish, is_legal, libs_after,
                          play, playable)
from engine.config import SearchConfig, count_rave, expand_visits_for, root_prior, root_rave
from engine.patterns import pattern_code
from engine.playout import (PlayoutScratch, atari_captures, escape_fails, playout_params,
                            policy_playout, self_atari)
from engine.priors import (PriorQueue, Ring, move_prob, request, root_planes, symmetric_probabilities,
                           write_policy)
from engine.tree import (A_EDGE, A_EDGE_END, EF_AMAF_N, EF_AMAF_W, EF_PRIOR_N, EF_PRIOR_W,
                         EI_MOVE, EXPANDED, EXPANDING, F_VALUE_N, F_VALUE_W, F_VISITS, F_WINS,
                         NN_PENDING, NN_READY, NO_EDGE, NO_NODE, ROOT, T_FIRST, T_MOVE, T_NCHILD,
                         T_STATE, T_VLOSS, UNEXPANDED, Tree, add_value, child_block, child_node,
                         edge_child, init_edge, settle)

log = logging.getLogger("engine")

# kernel parameter vector (built from SearchConfig by params_vector)
(P_C_EXPLORE, P_RAVE_EQUIV, P_FPU, P_EXPAND, P_VLOSS, P_EVEN, P_CAPTURE,
 P_ESCAPE, P_SELF_ATARI, P_PATTERN, P_EDGE, P_PASS, P_LADDER,
 P_KOMI, P_NN, P_NN_VISITS, P_RANK, P_LAMBDA, P_RAVE_ROOT) = range(19)
N_PARAMS = 19

# per-thread counters (C_UNFIT: descents stopped at a tree move the board
# does not allow, which only a bug can cause)
C_SIMS, C_EXPANDED, C_DEFERRED, C_UNFIT = range(4)


def params_vector(cfg: SearchConfig, komi: float, size: int,
                  counting: bool = False) -> np.ndarray:
    """The kernels' constants for a search of a ``size`` board at ``komi``;
    ``counting``: for a search that counts the position rather than
    chooses a move, which blends AMAF by ``count_rave`` at every node."""
    p = np.zeros(N_PARAMS, np.float64)
    p[P_C_EXPLORE] = cfg.c_explore
    p[P_RAVE_EQUIV] = count_rave(cfg) if counting else cfg.rave_equiv
    p[P_FPU] = cfg.fpu
    p[P_EXPAND] = expand_visits_for(cfg, size)
    p[P_VLOSS] = cfg.virtual_loss
    p[P_EVEN] = cfg.prior_even
    p[P_CAPTURE] = cfg.prior_capture
    p[P_ESCAPE] = cfg.prior_escape
    p[P_SELF_ATARI] = cfg.prior_self_atari
    p[P_PATTERN] = cfg.prior_pattern
    p[P_EDGE] = cfg.prior_edge
    p[P_PASS] = cfg.prior_pass
    p[P_LADDER] = cfg.prior_ladder
    p[P_KOMI] = komi
    p[P_NN] = 0.0                       # set by Search.run when a network is attached
    p[P_NN_VISITS] = cfg.nn_visits
    p[P_RANK] = cfg.nn_rank
    p[P_LAMBDA] = cfg.value_weight
    p[P_RAVE_ROOT] = count_rave(cfg) if counting else root_rave(cfg)
    return p


@njit(nogil=True, cache=True, _nrt=False)
def _move_prior(b, s, zob, p, c, params, gammas, lb, ls):
    """(visits, wins) of heuristic prior experience for c playing p; the
    ladder reader plays on (lb, ls)."""
    w = s[S_W]
    n = s[S_N]
    o = 3 - c
    pn = params[P_EVEN]
    pw = 0.5 * params[P_EVEN]
    capture = False
    escape = PASS
    near = False
    ladder = params[P_LADDER]
    for d in (-w, -1, 1, w):
        q = p + d
        k = b[COLOR, q]
        if k == o and b[LIBS, b[HEAD, q]] == 1:
            capture = True
        elif k == c and b[LIBS, b[HEAD, q]] == 1:
            escape = q
        if k == BLACK or k == WHITE:
            near = True
    if capture:
        pn += params[P_CAPTURE]
        pw += params[P_CAPTURE]
    elif escape != PASS:
        libs = libs_after(b, s, p, c)
        if libs == 2 and ladder > 0.0 and escape_fails(b, s, zob, escape, lb, ls):
            pn += ladder                 # runs into a ladder
        elif libs >= 2:
            pn += params[P_ESCAPE]
            pw += params[P_ESCAPE]
    if ladder > 0.0 and not capture:
        for d in (-w, -1, 1, w):
            q = p + d
            if (b[COLOR, q] == o and b[LIBS, b[HEAD, q]] == 2
                    and atari_captures(b, s, zob, p, c, q, lb, ls)):
                pn += ladder
                pw += ladder
                break
    if not capture and self_atari(b, s, p, c, 2):
        pn += params[P_SELF_ATARI]
    g = gammas[pattern_code(b, s, p, c)]
    pn += params[P_PATTERN]
    pw += params[P_PATTERN] * g / (g + 1.0)   # gammas are relative to the empty 3x3 (gamma 1)
    col = p % w - 1
    row = p // w - 1
    dist = min(min(col, row), min(n - 1 - col, n - 1 - row))
    if dist == 0 and n >= 9 and not near and not capture:
        pn += params[P_EDGE]
    return pn, pw


@njit(nogil=True, cache=True, _nrt=False)
def expand(ti, ei, ef, node, b, s, zob, arena, params, gammas, allowed, lb, ls):
    """Give ``node`` (whose position is (b, s)) its edges: every legal
    move that fills no own single-point eye and is ``allowed``, plus pass.
    Returns False only when the thread's edge arena is too small."""
    c = s[S_TO_MOVE]
    k = 0
    for i in range(s[S_NEMPTY]):
        p = b[EMPTIES, i]
        if allowed[p] and playable(b, s, p, c):
            k += 1
    if arena[A_EDGE] + k + 1 > arena[A_EDGE_END]:
        return False
    if ti[T_STATE, node] != UNEXPANDED:
        return True                      # another thread got there first
    ti[T_STATE, node] = EXPANDING
    first = arena[A_EDGE]
    arena[A_EDGE] += k + 1
    j = first
    for i in range(s[S_NEMPTY]):
        p = b[EMPTIES, i]
        if allowed[p] and playable(b, s, p, c):
            init_edge(ei, ef, j, p)
            pn, pw = _move_prior(b, s, zob, p, c, params, gammas, lb, ls)
            ef[EF_PRIOR_N, j] = pn
            ef[EF_PRIOR_W, j] = pw
            j += 1
    init_edge(ei, ef, j, PASS)
    if k > 0:
        ef[EF_PRIOR_N, j] = params[P_EVEN] + params[P_PASS]
        ef[EF_PRIOR_W, j] = 0.5 * params[P_EVEN]
    else:
        ef[EF_PRIOR_N, j] = params[P_EVEN]
        ef[EF_PRIOR_W, j] = 0.5 * params[P_EVEN]
    # publish: the block is complete before first/n/state say so
    ti[T_FIRST, node] = first
    ti[T_NCHILD, node] = k + 1
    ti[T_STATE, node] = EXPANDED
    return True


@njit(nogil=True, cache=True, _nrt=False)
def select_child(ti, tf, ei, ef, node, params):
    """The edge maximising UCT + RAVE with priors and virtual loss (NO_EDGE
    when there is none).  The rollouts' estimate (own results and prior
    experience, blended with AMAF by RAVE's beta, whose equivalence is
    P_RAVE_ROOT for the root's children and P_RAVE_EQUIV below) becomes, where the value
    network has judged positions in the child's subtree,
    (1 - lambda) * rollouts + lambda * value mean (AlphaGo's mix).  A child
    not yet valued, where the parent is, takes the parent's value mean in
    the value's place: the network and the rollouts disagree by up to 0.3
    about a position (docs/value.md), and mixing only the valued children
    moved them, against the others, by lambda times that.  An edge with no node behind it has
    no results, virtual loss or values yet."""
    first, n = child_block(ti, ei, node)
    c_explore = params[P_C_EXPLORE]
    equiv = params[P_RAVE_ROOT] if node == ROOT else params[P_RAVE_EQUIV]
    vloss = params[P_VLOSS]
    lam = params[P_LAMBDA]
    # the parent's value mean for the player to move there: what a child
    # not yet valued is taken to be worth in the value's half of the mix
    pvn = tf[F_VALUE_N, node]
    pv = 1.0 - tf[F_VALUE_W, node] / pvn if pvn > 0 else 0.0
    ln_parent = math.log(tf[F_VISITS, node] + 1.0)
    best = NO_EDGE
    best_v = -1e30
    for k in range(first, first + n):
        c = edge_child(ei, ti, k)
        # (the sums in float32 first, as the kernel always did: the same
        # choices to the last bit)
        if c != NO_NODE:
            nn = tf[F_VISITS, c] + ef[EF_PRIOR_N, k] + ti[T_VLOSS, c] * vloss
            sw = tf[F_WINS, c] + ef[EF_PRIOR_W, k]
            vn = tf[F_VALUE_N, c]
        else:
            nn = ef[EF_PRIOR_N, k] + 0.0
            sw = ef[EF_PRIOR_W, k] + 0.0
            vn = np.float32(0.0)
        if nn > 0:
            q = sw / nn
        else:
            q = params[P_FPU]
        an = ef[EF_AMAF_N, k]
        if an > 0:
            beta = an / (an + nn + nn * an / equiv)
            v = (1.0 - beta) * q + beta * ef[EF_AMAF_W, k] / an
        else:
            v = q
        if lam > 0:
            if vn > 0:
                v = (1.0 - lam) * v + lam * tf[F_VALUE_W, c] / tf[F_VALUE_N, c]
            elif pvn > 0:
                v = (1.0 - lam) * v + lam * pv
        if c_explore > 0:
            v += c_explore * math.sqrt(ln_parent / (nn + 1.0))
        if v > best_v:
            best_v = v
            best = k
    return best


@njit(nogil=True, cache=True, _nrt=False)
def simulate(ti, tf, ei, ef, arena, rb, rs, zob, b, s, rng, params, gammas, pp, allowed,
             allow_all, seq, first_idx, path, cand, wts, lb, ls, own, stack, counters, n_sims,
             root_hist, hist, rplanes, rnode, rcolor, rbusy, rfresh, rstate, fsb, fss):
    """Run n_sims simulations from the root position (rb, rs) on the thread's
    scratch board (b, s).  ``allowed`` filters the root's moves (superko);
    deeper nodes use ``allow_all``.  With a network (params[P_NN]) every
    EXPANDED node below the root with params[P_NN_VISITS] visits that the
    descent walks through is put in the thread's request ring (engine/priors:
    root_hist .. fss are the ring and the feature scratch)."""
    w = rs[S_W]
    npts = w * w
    root_c = rs[S_TO_MOVE]
    expand_visits = params[P_EXPAND]
    komi = params[P_KOMI]
    max_playout = 3 * npts
    max_depth = path.shape[0] - 2
    nn = params[P_NN] > 0
    rank = np.int64(params[P_RANK])
    for _ in range(n_sims):
        copy_board(rb, rs, b, s)
        node = ROOT
        depth = 0
        path[0] = ROOT
        for _ in range(max_depth):
            if ti[T_NCHILD, node] == 0:
                if (ti[T_STATE, node] == UNEXPANDED and s[S_PASSES] < 2
                        and (node == ROOT or tf[F_VISITS, node] >= expand_visits)):
                    ok = expand(ti, ei, ef, node, b, s, zob, arena, params, gammas,
                                allowed if node == ROOT else allow_all, lb, ls)
                    if ok:
                        counters[C_EXPANDED] += 1
                if ti[T_NCHILD, node] == 0:
                    break
            if (nn and node != ROOT and ti[T_STATE, node] == EXPANDED
                    and tf[F_VISITS, node] >= params[P_NN_VISITS]):
                if not request(ti, node, b, s, zob, seq, depth, root_hist, hist, rank,
                               rplanes, rnode, rcolor, rbusy, rfresh, rstate, fsb, fss):
                    counters[C_DEFERRED] += 1
            edge = select_child(ti, tf, ei, ef, node, params)
            move = PASS - 1 if edge == NO_EDGE else ei[EI_MOVE, edge]
            if move < PASS or move >= npts or not is_legal(b, s, move, s[S_TO_MOVE]):
                # a tree that does not fit the board it is played on (a bug:
                # tree reuse keeps them in step); playing the move would
                # corrupt the board's chains, so the descent ends here
                counters[C_UNFIT] += 1
                break
            child = child_node(ti, tf, ei, edge, node, arena)
            if child == NO_NODE:
                break                   # the node pool is spent: the rollout starts here
            ti[T_VLOSS, child] += 1
            play(b, s, zob, move, s[S_TO_MOVE])
            seq[depth] = move
            depth += 1
            path[depth] = child
            node = child
            if s[S_PASSES] >= 2:
                break
        nseq = depth
        # a double pass in the tree is not scored on the bare board: the game
        # is scored with the dead stones removed, so the rollout plays them
        # out (on a finished board it only passes, or captures the dead)
        if s[S_PASSES] >= 2:
            s[S_PASSES] = 0
        nseq = policy_playout(b, s, zob, rng, max_playout, gammas, pp,
                              cand, wts, lb, ls, seq, nseq)
        black, white = area_fill(b, s, own, stack)
        score = black - white - komi
        winner = BLACK if score > 0 else WHITE
        # AMAF: first_idx[m] = first index >= d at which m was played
        for i in range(nseq - 1, depth - 1, -1):
            m = seq[i]
            if m >= 0:
                first_idx[m] = i
        for d in range(depth, -1, -1):
            if d < depth:
                m = seq[d]
                if m >= 0:
                    first_idx[m] = d
            nd = path[d]
            if d >= 1:
                mover = root_c if (d - 1) % 2 == 0 else 3 - root_c
                tf[F_VISITS, nd] += 1.0
                if winner == mover:
                    tf[F_WINS, nd] += 1.0
                ti[T_VLOSS, nd] -= 1
            else:
                tf[F_VISITS, nd] += 1.0
            f0, nc = child_block(ti, ei, nd)
            if nc > 0:
                cd = root_c if d % 2 == 0 else 3 - root_c
                win = 1.0 if winner == cd else 0.0
                for k in range(f0, f0 + nc):
                    m = ei[EI_MOVE, k]
                    if 0 <= m < npts:
                        fi = first_idx[m]
                        if fi >= 0 and (fi - d) % 2 == 0:
                            ef[EF_AMAF_N, k] += 1.0
                            ef[EF_AMAF_W, k] += win
        for i in range(nseq):
            m = seq[i]
            if m >= 0:
                first_idx[m] = -1
        counters[C_SIMS] += 1
    return 0


# --------------------------------------------------------------------------
# Python side: threads, stopping, results


@dataclass
class Candidate:
    move: int
    visits: int
    winrate: float      # for the player to move at the root
    prior: float        # the network's probability once the root has it, else the
                        # heuristic prior's value (wins / visits of prior experience)
    pv: list[int]


@dataclass
class NetStats:
    """The delayed priors during one search (see engine/priors.py)."""
    requested: int = 0
    evaluated: int = 0
    valued: int = 0         # evaluations that brought a value (a value network's)
    dropped: int = 0
    deferred: int = 0
    queue: int = 0
    lag_median_ms: float = 0.0
    lag_p95_ms: float = 0.0
    nn_visits: float = 0.0
    mean_batch: float = 0.0


@dataclass
class SearchResult:
    move: int
    winrate: float
    sims: int
    seconds: float
    nodes: int
    candidates: list[Candidate]
    ownership: np.ndarray = field(repr=False)   # per padded point, +1 black .. -1 white
    net: NetStats | None = None                 # None: no network attached
    playouts: np.ndarray | None = field(default=None, repr=False)
    # the playouts' own ownership when an ownership network was blended in
    # (``ownership`` is then the blend); None: ``ownership`` is the playouts'
    tree_bytes: int = 0     # the tree's pool bytes in use (nodes and edges)
    rollout_winrate: float | None = None
    # the best move's rollouts alone, without the value network's share
    # (None: the same as ``winrate``)

    @property
    def playout_ownership(self) -> np.ndarray:
        """What the playouts alone made of each point: whether they settled
        the fights (the pass rules) is theirs to say, not the network's."""
        return self.ownership if self.playouts is None else self.playouts

    @property
    def visits(self) -> int:
        """The root moves' visits: this search's simulations and those of
        the kept subtree, all the evidence behind ``winrate``."""
        return sum(c.visits for c in self.candidates)

    @property
    def sims_per_s(self) -> float:
        return self.sims / self.seconds if self.seconds > 0 else 0.0


class _Scratch:
    """What one search thread owns, allocated once."""

    def __init__(self, seed: int, max_points: int):
        from engine.board import NROWS, NSCALARS
        self.b = np.zeros((NROWS, max_points), np.int32)
        self.s = np.zeros(NSCALARS, np.int64)
        self.rng = np.array([seed * 0x9E3779B97F4A7C15 % 2**64 | 1], np.uint64)
        self.seq = np.zeros(4 * max_points, np.int32)
        self.first_idx = np.full(max_points, -1, np.int32)
        self.path = np.zeros(512, np.int32)
        self.playout = PlayoutScratch(max_points)
        self.own = np.zeros(max_points, np.float64)
        self.stack = np.zeros(max_points, np.int32)
        self.counters = np.zeros(4, np.int64)
        self.arena = np.zeros(4, np.int64)      # engine/tree.py's A_* slots
        self.ring = Ring()


def position_key(board: Board) -> tuple:
    return (board.size, board.hash, board.to_move, board.ko)


def blend_ownership(playouts: np.ndarray, network: np.ndarray, doubt: float) -> np.ndarray:
    """The network's word where the playouts are in doubt: each point keeps
    the playouts' ownership (+1 black .. -1 white) where its size is at
    least ``doubt`` (3 playouts in 5 or more end with one owner at 0.2, 7
    in 10 at 0.4) and takes the network's elsewhere.  Light playouts settle
    most territory and most living and captured groups; what they leave
    undecided (a lone stone in a large open area, which lives in half of
    them) the network usually knows.  The network, though, is sometimes
    confidently wrong where the playouts are right (a large dead group it
    calls alive), which is why it does not get a say on every point: on
    held-out 19x19 game ends, an average of the two and a blend weighted by
    the playouts' doubt both counted worse than the playouts alone
    (README, "Ownership network")."""
    return np.where(np.abs(playouts) < doubt, network, playouts)


class Search:
    """A reusable tree search.  ``run`` searches the given position; the
    tree is kept between calls when the caller reports the moves played with
    ``advance`` and is dropped otherwise."""

    def __init__(self, cfg: SearchConfig, gammas: np.ndarray, threads: int = 1, seed: int = 1):
        from engine.board import MAX_SIZE, n_points
        self.cfg = cfg
        self.gammas = gammas
        self.tree = Tree(cfg.max_memory)
        self.threads = max(1, threads)
        self.scratch = [_Scratch(seed + i, n_points(MAX_SIZE)) for i in range(self.threads)]
        self.allow_all = np.ones(n_points(MAX_SIZE), np.uint8)
        self.root_key: tuple | None = None
        self.stop_event = threading.Event()
        self.interrupted = False        # stop() was called during the last run
        self.queue = PriorQueue(self.tree, cfg.nn_queue, cfg.prior_cnn)
        self.queue.rings = [sc.ring for sc in self.scratch]
        self.network = None             # evaluate(planes, colors) -> probs, or None
        self.value_network = None       # evaluate(planes, colors, komi) -> (probs, values)
        self.ownership_net = None       # evaluate(planes, colors) -> P(own), or None
        self._own_cache: tuple | None = None
        self._policy_cache: tuple | None = None     # (position key, root_policy's answer)
        self._root_prior_key: tuple | None = None   # the root whose priors are worth root_prior
        self._root_history: tuple[int, ...] = ()

    def attach_network(self, evaluate, supports=lambda size: True, fed: bool = True,
                       value=None) -> None:
        """Use a policy network: ``evaluate(planes uint8 (B, P, n, n),
        colors (B,)) -> (B, n * n) probabilities`` for the root (which waits
        for its own evaluation) and, when ``fed``, through ``self.queue``
        for a worker that feeds the other nodes (nets/worker.py; without
        one nothing would serve the queue).  ``supports(size)`` says which
        board sizes it takes.  ``value(planes, colors, komi) -> (probs,
        values)``, where the network has a value head, gives the root's
        evaluation its value too (the worker brings the other nodes')."""
        self.network = evaluate
        self.value_network = value
        self.network_supports = supports
        self.network_fed = fed
        self._policy_cache = None
        self.clear()

    def attach_ownership(self, evaluate, supports=lambda size: True) -> None:
        """Blend an ownership network into every result's ownership:
        ``evaluate(planes uint8 (B, P, n, n), colors (B,)) -> (B, n * n)``
        probabilities that the player to move owns each point at the end.
        A result's ownership is then :func:`blend_ownership` of the
        playouts' and the network's at ``cfg.own_doubt``."""
        self.ownership_net = evaluate
        self.ownership_supports = supports
        self._own_cache = None

    def net_ownership(self, board: Board, history=()) -> np.ndarray | None:
        """The ownership network's opinion of ``board`` per padded point,
        +1 black .. -1 white (None without one for this size); one
        evaluation per position, kept for the reports that follow."""
        if self.ownership_net is None or not self.ownership_supports(board.size):
            return None
        key = position_key(board)
        cached = self._own_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        prob = self.ownership_net(root_planes(board, history, self.cfg.nn_rank),
                                  np.array([board.to_move], np.int32))[0]
        sign = 1.0 if board.to_move == BLACK else -1.0
        n, w = board.size, int(board.s[S_W])
        out = np.zeros(len(self.allow_all))      # the playouts' layout: the largest board's
        for p in board.points():
            out[p] = sign * (2.0 * float(prob[(p // w - 1) * n + p % w - 1]) - 1.0)
        self._own_cache = (key, out)
        return out

    def uses_network(self, size: int) -> bool:
        return self.network is not None and self.network_supports(size)

    # tree reuse ----------------------------------------------------------
    def clear(self) -> None:
        self.queue.new_generation()
        self.tree.clear()
        self._forget_arenas()
        self.root_key = None
        self._root_prior_key = None

    def _forget_arenas(self) -> None:
        """Arenas index the pool as it was: after a clear or a compaction
        they may cover live nodes, so every thread must get a new one."""
        for sc in self.scratch:
            sc.arena[:] = 0

    def advance(self, move: int, board_after: Board) -> None:
        """The game went on with ``move``: keep that subtree if we have it.
        The subtree is kept only when the move was played by the colour the
        root had to move (``board_after`` has the other colour to move: GTP
        lets a controller play either colour in any order).  A move of the
        other colour would put the stone where the tree has the opponent's,
        and every line below it would be played on a board it was not read
        on: moves onto occupied points corrupt the playing board's chains."""
        if self.root_key is None:
            return
        if self.root_key[2] != 3 - board_after.to_move:
            self.clear()
            return
        child = self.tree.child_with_move(ROOT, move)
        if child == NO_NODE:
            self.clear()
            return
        self.queue.new_generation()     # the kept nodes get new indices
        self.tree.reroot(child)
        self._forget_arenas()
        self.root_key = position_key(board_after)

    # searching -----------------------------------------------------------
    def run(self, board: Board, komi: float, max_sims: int | None = None,
            seconds: float | None = None, avoid: tuple[int, ...] = (),
            history: tuple[int, ...] = (), counting: bool = False) -> SearchResult:
        """Search ``board`` until ``max_sims`` simulations, ``seconds`` or
        ``stop()``; with neither limit it runs until ``stop()``.  Root moves
        in ``avoid`` (points, or PASS) are not searched (analysis requests,
        a pass the player refuses); they stay pruned in the kept tree, so
        clear it afterwards unless the position changes.  ``history``: the moves
        that led to ``board``, most recent first (the network's turns-since
        planes).  ``counting``: the search counts the position (its
        ownership) rather than chooses a move (``params_vector``)."""
        if board.s[S_PASSES] >= 2:
            # after two passes the root must still get children: cleanup
            # moves (and their ownership) are asked for exactly then
            board = board.copy()
            board.s[S_PASSES] = 0
        if position_key(board) != self.root_key:
            self.clear()
        tree = self.tree
        color = board.to_move
        if not self._root_fits(board):
            log.warning("the kept tree has root moves this position does not allow: dropped")
            self.clear()
        self.root_key = position_key(board)
        self._root_history = tuple(history)
        allowed = self.allow_all.copy()
        for p in board.points():
            if board.b[COLOR, p] == EMPTY and board.legality(p, color) == "superko":
                allowed[p] = 0
        for p in avoid:
            if p != PASS:
                allowed[p] = 0
        no_pass = PASS in avoid
        self._prune_root(allowed, no_pass)
        params = params_vector(self.cfg, komi, board.size, counting)
        pp = playout_params(self.cfg)
        nn = self.uses_network(board.size)
        queue = self.queue
        if nn:
            params[P_NN] = 1.0 if self.network_fed else 0.0
            queue.attach(params, P_NN_VISITS, board.size, komi)
            queue.stats.reset()
        root_hist = np.full(4, PASS, np.int32)
        for i, p in enumerate(history[:4]):
            root_hist[i] = p
        for sc in self.scratch:
            sc.own[:] = 0.0
            sc.counters[:] = 0
        self.stop_event.clear()
        self.interrupted = False
        started = time.perf_counter()
        deadline = None if seconds is None else started + seconds
        stop = self.stop_event

        # a simulation makes at most one node, and an expansion at most one
        # edge per point and the pass; a batch whose later expansions find
        # the edge arena spent leaves those leaves to their next visit
        one_expansion = board.size * board.size + 1

        def batch(sc: _Scratch, n: int) -> None:
            tree.reserve(sc.arena, n, one_expansion)
            r = sc.ring
            ps = sc.playout
            simulate(*tree.arrays, sc.arena, board.b, board.s, ZOBRIST, sc.b, sc.s,
                     sc.rng, params, self.gammas, pp, allowed, self.allow_all, sc.seq,
                     sc.first_idx, sc.path, ps.cand, ps.wts, ps.lb, ps.ls, sc.own, sc.stack,
                     sc.counters, n, root_hist, r.hist, r.rplanes, r.rnode, r.rcolor,
                     r.rbusy, r.rfresh, r.rstate, r.sb, r.ss)
            if nn:
                queue.publish(r)

        def work(sc: _Scratch) -> None:
            # Stopping is decided here, after each batch, so that a seeded
            # one-thread search with a simulation budget is reproducible.
            while not stop.is_set():
                n = self.cfg.batch
                if max_sims is not None:
                    n = min(n, max_sims - self.sims_done())
                    if n <= 0:
                        break
                batch(sc, n)
                if self._decided(max_sims, deadline, started):
                    break
            stop.set()

        batch(self.scratch[0], 1)    # expands the root before threads race for it
        if no_pass:
            self._prune_root(allowed, no_pass)   # a new root got its pass child just now
        if nn:
            self._evaluate_root(board, history, komi)
        workers = [threading.Thread(target=work, args=(sc,), daemon=True) for sc in self.scratch]
        for t in workers:
            t.start()
        try:
            while not stop.wait(0.005):
                if deadline is not None and time.perf_counter() >= deadline:
                    break
        finally:
            stop.set()
            for t in workers:
                t.join()
        settle(tree.ti, tree.tf, tree.ei, tree.used)
        elapsed = time.perf_counter() - started
        result = self._result(board, elapsed)
        unfit = int(sum(sc.counters[C_UNFIT] for sc in self.scratch))
        if unfit:
            log.warning("%d descents stopped at a tree move the board does not allow: "
                        "tree dropped", unfit)
            self.clear()
        return result

    def _network_row(self, board: Board, history,
                     komi: float | None = None) -> tuple[np.ndarray, float | None]:
        """The network's (n * n) probabilities for ``board``'s player to move
        (n * n + 1, the pass last, from a network with a pass output) and,
        with ``komi`` and a value network, from the same forward pass, its
        probability that that player wins (None otherwise)."""
        planes = root_planes(board, history, self.cfg.nn_rank)
        colors = np.array([board.to_move], np.int32)
        if komi is not None and self.value_network is not None:
            probs, values = self.value_network(planes, colors, komi)
            return probs[0], float(values[0])
        return self.network(planes, colors)[0], None

    def _evaluate_root(self, board: Board, history, komi: float) -> None:
        """The root waits for its own network evaluation (the one wait the
        search allows itself): its children's priors, worth ``root_prior``,
        decide the first simulations.  A value network's judgement of the
        root goes into the root's value statistics.  A root kept from the
        last move got its priors from the worker as a node below the root,
        worth ``prior_cnn``: it gets what ``prior_root`` asks for more, once,
        in write_policy's form (its value is already in)."""
        ti, tf, ei, ef = self.tree.arrays
        extra = root_prior(self.cfg) - self.cfg.prior_cnn
        if ti[T_STATE, ROOT] == EXPANDED:
            equiv = root_prior(self.cfg)
        elif (extra != 0 and ti[T_STATE, ROOT] == NN_READY
              and self._root_prior_key != position_key(board)):
            equiv, komi = extra, None
        else:
            return
        probs, value = self._network_row(board, history, komi)
        with self.queue.tree_lock:
            ti[T_STATE, ROOT] = NN_PENDING
            write_policy(ti, ei, ef, ROOT, probs, board.s[S_W], board.size, equiv)
            if value is not None:
                add_value(ti, tf, ROOT, value)
        self._root_prior_key = position_key(board)
        self._keep_root_policy(board, probs)

    def root_policy(self, board: Board) -> dict[int, float]:
        """The network's probability of each of the root's moves (``board``
        is the root's position), renormalised over them as the priors were
        written, for displays: the tree keeps the priors' experience, not
        the probabilities.  One evaluation per position, kept; the root's
        own evaluation fills it."""
        cached = self._policy_cache
        if cached is not None and cached[0] == position_key(board):
            return cached[1]
        return self._keep_root_policy(board, self._network_row(board, self._root_history)[0])

    def _keep_root_policy(self, board: Board, probs: np.ndarray) -> dict[int, float]:
        n, w = board.size, int(board.s[S_W])
        raw = {int(self.tree.ei[EI_MOVE, k]): float(move_prob(probs, self.tree.ei[EI_MOVE, k], w, n))
               for k in self.tree.edges(ROOT)}
        total = sum(p for p in raw.values() if p > 0)
        out = {m: p / total if total > 0 and p > 0 else 0.0 for m, p in raw.items()}
        self._policy_cache = (position_key(board), out)
        return out

    def network_policy(self, board: Board, history=(), symmetries: int = 1) -> dict[int, float]:
        """The network's probability of every legal move of ``board``'s
        player to move, PASS included where the network has a pass output
        (empty without a network for this size); with ``symmetries`` 8 the
        mean over the board's symmetries (:func:`symmetric_probabilities`)."""
        return self.network_judgement(board, history, symmetries)[0]

    def network_judgement(self, board: Board, history=(), symmetries: int = 1,
                          komi: float | None = None) -> tuple[dict[int, float], float | None]:
        """:meth:`network_policy` and, with ``komi`` and a value network, its
        probability that ``board``'s player to move wins (the mean over the
        symmetries where the probabilities are), from the same forward pass;
        None for the value otherwise."""
        if not self.uses_network(board.size):
            return {}, None
        if symmetries != 8:
            probs, value = self._network_row(board, history, komi)
        elif komi is not None and self.value_network is not None:
            probs, value = symmetric_probabilities(self.value_network,
                                                   root_planes(board, history, self.cfg.nn_rank),
                                                   board.to_move, board.size, komi)
        else:
            probs, value = symmetric_probabilities(self.network,
                                                   root_planes(board, history, self.cfg.nn_rank),
                                                   board.to_move, board.size), None
        n, w = board.size, int(board.s[S_W])
        out = {}
        for p in (*board.points(), PASS):
            prob = float(move_prob(probs, p, w, n))
            if prob > 0:
                out[p] = prob
        return out, value

    def stop(self) -> None:
        """End the running search early (from another thread); ``interrupted``
        tells the caller afterwards."""
        self.interrupted = True
        self.stop_event.set()

    def snapshot(self, board: Board, seconds: float = 0.0) -> SearchResult:
        """What ``run`` would return now, for reports while it runs: safe to
        call from another thread (statistics are read without locks, as the
        search threads themselves tolerate); ``seconds`` is reported as is."""
        return self._result(board, seconds)

    def priors(self, board: Board, komi: float) -> dict[int, float]:
        """The heuristic prior value (wins / visits of prior experience) of
        each move the root of ``board`` would get, pass left out."""
        params = params_vector(self.cfg, komi, board.size)
        ps = PlayoutScratch(board.b.shape[1])
        c = board.to_move
        out = {}
        for p in board.points():
            if (board.b[COLOR, p] == EMPTY and not is_eyeish(board.b, board.s, p, c)
                    and board.legality(p, c) is None):
                pn, pw = _move_prior(board.b, board.s, ZOBRIST, p, c, params, self.gammas,
                                     ps.lb, ps.ls)
                out[p] = float(pw / pn)
        return out

    def sims_done(self) -> int:
        return int(sum(sc.counters[C_SIMS] for sc in self.scratch))

    def _decided(self, max_sims: int | None, deadline: float | None, started: float) -> bool:
        """True when the most visited root move can no longer be overtaken
        in the simulations (or time) left."""
        if max_sims is None and deadline is None:
            return False
        done = self.sims_done()
        edges = self.tree.edges(ROOT)
        searched = self.tree.ef[EF_PRIOR_N, edges.start:edges.stop] < 1e9  # pruned moves do not count
        visits = np.sort(self.tree.edge_visits(ROOT)[searched])
        if len(visits) < 2:
            return len(visits) == 1
        lead = visits[-1] - visits[-2]
        left = math.inf
        if max_sims is not None:
            left = max_sims - done
        if deadline is not None:
            now = time.perf_counter()
            left = min(left, done / max(now - started, 1e-6) * (deadline - now))
        return done > 100 and lead > left

    def _root_fits(self, board: Board) -> bool:
        """Every root move of the kept tree is legal here (simple ko), as
        tree reuse guarantees; a tree that fails this is a bug's, and the
        search would play its moves on a board they corrupt."""
        ei = self.tree.ei
        npts = board.b.shape[1]
        for k in self.tree.edges(ROOT):
            m = int(ei[EI_MOVE, k])
            if m != PASS and not (0 <= m < npts and is_legal(board.b, board.s, m, board.to_move)):
                return False
        return True

    def _prune_root(self, allowed: np.ndarray, no_pass: bool = False) -> None:
        """Root children that superko forbids or the caller avoids (the
        pass too when ``no_pass``): experience that no selection overcomes,
        and left out of the result."""
        ei, ef = self.tree.ei, self.tree.ef
        for k in self.tree.edges(ROOT):
            m = ei[EI_MOVE, k]
            if (m == PASS and no_pass) or (m >= 0 and not allowed[m]):
                ef[EF_PRIOR_N, k] = 1e9
                ef[EF_PRIOR_W, k] = 0.0

    def node_rollout_winrate(self, node: int) -> float:
        """The mean of ``node``'s rollouts for the colour that played its
        move (0.5 with none)."""
        v = float(self.tree.tf[F_VISITS, node]) if node != NO_NODE else 0.0
        return float(self.tree.tf[F_WINS, node]) / v if v > 0 else 0.5

    def node_winrate(self, node: int) -> float:
        """The winrate of ``node`` for the colour that played its move: its
        rollouts' mean, mixed with its value mean where the value network
        judged positions below it, as selection mixes them (0.5 with
        neither; NO_NODE, a move no simulation tried, has neither)."""
        if node == NO_NODE:
            return 0.5
        tf = self.tree.tf
        v, vn = float(tf[F_VISITS, node]), float(tf[F_VALUE_N, node])
        lam = self.cfg.value_weight if vn > 0 else 0.0
        rollouts = self.node_rollout_winrate(node)
        if v == 0 and vn > 0:
            lam = 1.0
        value = float(tf[F_VALUE_W, node]) / vn if vn > 0 else 0.5
        return (1.0 - lam) * rollouts + lam * value

    def principal_variation(self, node: int, limit: int = 12) -> list[int]:
        """The moves from ``node`` down its most visited children (``node``'s
        own move first)."""
        tree = self.tree
        pv = []
        while len(pv) < limit and node != NO_NODE:
            pv.append(int(tree.ti[T_MOVE, node]))
            edges = tree.edges(node)
            if len(edges) == 0:
                break
            v = tree.edge_visits(node)
            if v.max() <= 0:
                break
            node = tree.child(edges.start + int(np.argmax(v)))
        return pv

    def _result(self, board: Board, elapsed: float) -> SearchResult:
        ti, tf, ei, ef = self.tree.arrays
        # the ownership sums before the count: a playout adds its area, then
        # counts itself, so the count read after them covers every playout in
        # them but the one or two still finishing (at most one per thread;
        # the clip below absorbs them).  Read the other way round, a report
        # taken while the search starts divided some dozens of playouts by one.
        own_sum = sum(sc.own for sc in self.scratch)
        sims = self.sims_done()
        cands, rollout_mean = [], {}
        policy = self.root_policy(board) if ti[T_STATE, ROOT] == NN_READY else None
        for k in self.tree.edges(ROOT):
            m = int(ei[EI_MOVE, k])
            if ef[EF_PRIOR_N, k] >= 1e9:
                continue
            child = self.tree.child(k)
            v = float(tf[F_VISITS, child]) if child != NO_NODE else 0.0
            pn = float(ef[EF_PRIOR_N, k])
            if policy is not None:
                prior = policy.get(m, 0.0)
            else:
                prior = float(ef[EF_PRIOR_W, k]) / pn if pn > 0 else 0.5
            rollout_mean[m] = self.node_rollout_winrate(child)
            cands.append(Candidate(
                move=m, visits=int(v), winrate=self.node_winrate(child), prior=prior,
                pv=self.principal_variation(child) if child != NO_NODE else [m]))
        cands.sort(key=lambda c: (-c.visits, -c.winrate))
        own = np.clip(own_sum / max(sims, 1), -1.0, 1.0)
        playouts = None
        net_own = self.net_ownership(board, self._root_history)
        if net_own is not None:
            playouts = own
            own = blend_ownership(own, net_own, self.cfg.own_doubt)
        if cands:
            best = cands[0]
            move, winrate, rollout = best.move, best.winrate, rollout_mean[best.move]
        else:
            move, winrate, rollout = PASS, 0.5, 0.5
        net = None
        if self.uses_network(board.size):
            st = self.queue.stats
            net = NetStats(requested=st.requested, evaluated=st.evaluated, valued=st.valued,
                           dropped=st.dropped,
                           deferred=int(sum(sc.counters[C_DEFERRED] for sc in self.scratch)),
                           queue=self.queue.depth(), lag_median_ms=st.lag_ms(0.5),
                           lag_p95_ms=st.lag_ms(0.95),
                           nn_visits=float(self.queue.params[P_NN_VISITS])
                           if self.queue.params is not None else 0.0,
                           mean_batch=st.positions / st.batches if st.batches else 0.0)
        return SearchResult(move, winrate, sims, elapsed, self.tree.used, cands, own, net,
                            playouts, self.tree.bytes_used, rollout)
