"""Engine settings, built once from the command line (engine/gtp.py) and
passed down; frozen so no part of the engine changes them behind another's
back."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

# What a user may set (command line, GTP commands, --param): a value outside
# these ranges is refused with a message that states the range.
KOMI_LIMIT = 1000.0         # |komi|: beyond the largest board's 625 points it means nothing
MAX_ROLLOUTS = 10**9        # simulations per move
MAX_THREADS = 64            # search threads
MAX_SECONDS = 86400.0       # seconds per move, lag kept back from a clock
MAX_SIZE = 25               # board size (GTP's letters end at Z)
MAX_GFX_INTERVAL = 3600.0   # seconds between GoGui live graphics


def check_range(name: str, value, low, high) -> None:
    """ValueError naming ``name`` and the range unless low <= value <= high
    (and, for a float, finite)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number")
    if low <= value <= high:
        return
    if high == math.inf:
        raise ValueError(f"{name} must be at least {_num(low)}, got {_num(value)}")
    raise ValueError(f"{name} must be from {_num(low)} to {_num(high)}, got {_num(value)}")


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e16 else f"{x:g}"


def check_komi(komi: float) -> None:
    check_range("komi", float(komi), -KOMI_LIMIT, KOMI_LIMIT)


#: the default tree memory cap (--max-memory): engine/tree.py's pools of nodes
#: and edges
MAX_MEMORY = 2 << 30
#: the smallest cap --max-memory takes
MIN_MEMORY = 1 << 20


def parse_bytes(text: str) -> int:
    """``2G``, ``512M``, ``1.5g``, ``300000000``: a size in bytes (K, M, G,
    T: powers of 1024).  ValueError for anything else."""
    t = str(text).strip().upper().removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(t[-1:], 1)
    number = t[:-1] if scale > 1 else t
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"not a size: {text!r} (e.g. 2G, 512M)") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"not a size: {text!r} (e.g. 2G, 512M)")
    return int(value * scale)


#: Scoring rules by name (KGS's names, which ``kgs-rules`` sends, and
#: Tromp-Taylor): the points White gets on top of the komi in a game with
#: ``h`` handicap stones.  All are counted by area.  Chinese rules give
#: White a point per stone, AGA rules one for all but the first (KGS's
#: rules help); New Zealand rules and Tromp-Taylor none.  Japanese rules
#: count territory: with Black having played ``h`` stones more, an area
#: count with a point per stone to White comes to the same result, up to
#: the last move's parity, so they get Chinese's.
RULES = {
    "tromp-taylor": lambda h: 0,
    "chinese": lambda h: h,
    "japanese": lambda h: h,
    "aga": lambda h: max(h - 1, 0),
    "new_zealand": lambda h: 0,
}


def handicap_bonus(rules: str, handicap: int) -> int:
    """The points White gets for ``handicap`` stones under ``rules`` (a
    key of :data:`RULES`; ValueError for another name)."""
    if rules not in RULES:
        raise ValueError(f"unknown rules {rules!r}: one of {', '.join(RULES)}")
    return RULES[rules](handicap) if handicap >= 2 else 0


@dataclass(frozen=True)
class SearchConfig:
    """Every constant of the tree search, named in one place.

    Selection maximises, over the children of a node,
        (1 - beta) * Q + beta * Q_amaf + c_explore * sqrt(ln(N) / n)
    where Q counts the child's own results plus its prior experience, and
    beta = n_amaf / (n_amaf + n + n * n_amaf / rave_equiv) (Gelly & Silver
    2011).  Priors are equivalent experience: a heuristic worth ``k`` adds
    ``k`` visits and ``k * value`` wins to the child before any playout.
    """
    c_explore: float = 0.1          # UCT exploration constant
    rave_equiv: float = 300.0       # RAVE equivalence parameter (visits at which beta = 1/2 roughly)
                                    # (docs/search.md, "The RAVE equivalence")
    rave_root: float = 0.0          # the same for the root's children alone; 0: rave_equiv
    count_rave: float = 3000.0      # the same in the searches that count a position rather
                                    # than choose a move (final_score, final_status_list, the
                                    # pass-back and resign checks), at every node; 0: rave_equiv
    fpu: float = 1.0                # value of a child with no experience at all (first-play urgency)
    expand_visits: int = 0          # visits a leaf needs before it gets children; 0: by the
                                    # board's size (expand_visits_for: 2 on 9x9, 8 on 19x19)
    virtual_loss: int = 3           # losses added to a child while a thread is inside it
    prior_even: float = 4.0         # visits at 0.5 given to every child (keeps early Q sane)
    prior_capture: float = 30.0     # wins for a move that captures
    prior_escape: float = 20.0      # wins for a move that saves a chain in atari
    prior_self_atari: float = 20.0  # losses for a move that puts its own 2+ stones in atari
    prior_pattern: float = 10.0     # visits split by the 3x3 pattern's weight
    prior_edge: float = 10.0        # losses for a first-line move away from fights (19x19-like boards)
    prior_pass: float = 20.0        # losses for passing while moves remain
    prior_ladder: float = 20.0      # wins for an atari the ladder reader says captures, losses
                                    # for running out of atari into a ladder
    playout_pattern_mass: float = 4.0   # weight of "play elsewhere" against 3x3 patterns around the last move
    playout_self_atari: int = 3     # a random playout move putting this many own stones in atari is refused
    playout_ladder: int = 1         # 1: playouts run out of atari only where no ladder catches the chain
    playout_two_lib: int = 1        # 1: playouts atari the last move's two-liberty chain when that captures
    batch: int = 16                 # simulations per kernel call between thread check-points
    max_memory: int = MAX_MEMORY    # tree memory cap in bytes (--max-memory 2G); when
                                    # reached the search stops growing the tree and keeps
                                    # simulating.  A 19x19 expansion takes ~360 edges of
                                    # 24 bytes; a node (40 bytes) is made on its first visit
    # delayed priors from the policy network (engine/priors.py)
    prior_cnn: float = 40.0         # visits of experience the network's opinion of a move is worth
                                    # (value sqrt(p / p_best)), added to the heuristic priors
    prior_root: float = 0.0         # the same at the root, where the move is chosen; 0: prior_cnn
                                    # (docs/search.md, "Priors at high simulation counts")
    nn_visits: int = 8              # visits a node needs before it is sent to the network
                                    # (the back-pressure raises it while the queue is long); a
                                    # node gets its children at expand_visits, so nodes the
                                    # search tried once or twice cost the network nothing
    nn_queue: int = 512             # queue bound (requests) before back-pressure starts
    nn_rank: int = 9                # rank planes fed to the network (1..9 dan)
    value_weight: float = 0.25      # lambda: where a node has value statistics (a value
                                    # network's), selection and the reported winrates use
                                    # (1 - lambda) * rollout mean + lambda * value mean
                                    # (AlphaGo: 0.5; 0.25 chosen by matches, docs/value.md);
                                    # the priors are experience in the rollout half, so at 1
                                    # they drop out of selection (lost 30 of 30, docs/value.md);
                                    # without a value network it does nothing
    # dynamic komi (engine/player.py, Player.search_komi): the komi the search plays with,
    # never the one the game is counted with
    dyn_komi: int = 1               # 0 off; 1 linear, in handicap games only; 2 adaptive, in
                                    # every game (keeps the engine's winrate in the band below)
    dyn_komi_stone: float = 7.0     # linear: points of komi given to white per handicap stone
                                    # at the start (Pachi's value) ...
    dyn_komi_moves: int = 200       # ... falling to none at this move (19x19; other sizes in
                                    # proportion to their area)
    dyn_komi_low: float = 0.45      # adaptive: below this winrate the komi moves in the
                                    # engine's favour, above dyn_komi_high against it
    dyn_komi_high: float = 0.65
    dyn_komi_limit: float = 60.0    # adaptive: never more than this many points from the real komi
    dyn_komi_adapt_moves: int = 400  # ... a limit held until dyn_komi_moves, then falling in a
                                    # straight line to none at this move (19x19; other sizes in
                                    # proportion to their area), so the real komi decides the endgame
    own_doubt: float = 0.5          # the ownership network decides the points whose playout
                                    # ownership is below this in size (search.blend_ownership)

    def __post_init__(self) -> None:
        """Every constant finite and of a sane sign, so that ``--param`` (or a
        caller) cannot hand the kernels a value that stalls or corrupts them."""
        for f in fields(self):
            value = getattr(self, f.name)
            check_range(f.name, value, 0, math.inf if isinstance(value, int) else 1e9)
        check_range("batch", self.batch, 1, 1 << 20)
        check_range("max_memory", self.max_memory, MIN_MEMORY, 1 << 40)
        check_range("nn_rank", self.nn_rank, 1, 9)
        check_range("rave_equiv", self.rave_equiv, 1e-9, 1e9)
        check_range("fpu", self.fpu, 0.0, 1.0)
        check_range("own_doubt", self.own_doubt, 0.0, 1.0)
        check_range("value_weight", self.value_weight, 0.0, 1.0)
        check_range("dyn_komi", self.dyn_komi, 0, 2)
        check_range("dyn_komi_low", self.dyn_komi_low, 0.0, 1.0)
        check_range("dyn_komi_high", self.dyn_komi_high, self.dyn_komi_low, 1.0)
        check_range("dyn_komi_moves", self.dyn_komi_moves, 1, 10_000)
        check_range("dyn_komi_adapt_moves", self.dyn_komi_adapt_moves, 1, 10_000)


def search_params(items: list[str]) -> dict:
    """``NAME=VALUE`` items (``--param``) as SearchConfig field values of
    the field's own type; an unknown name or a bad value is a ValueError
    naming the item."""
    known = {f.name: f for f in fields(SearchConfig)}
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in known:
            raise ValueError(f"--param {item!r}: expected NAME=VALUE with NAME one of "
                             f"{', '.join(sorted(known))}")
        kind = int if known[name].type in (int, "int") else float
        try:
            out[name] = kind(value)
        except ValueError:
            raise ValueError(f"--param {item!r}: {value!r} is not "
                             f"{'an integer' if kind is int else 'a number'}") from None
    return out


def root_prior(cfg: SearchConfig) -> float:
    """The visits of experience the network's opinion of a root move is
    worth: ``cfg.prior_root`` where set, else ``cfg.prior_cnn``, as at
    every other node."""
    return cfg.prior_root if cfg.prior_root > 0 else cfg.prior_cnn


def root_rave(cfg: SearchConfig) -> float:
    """RAVE's equivalence parameter for the root's children:
    ``cfg.rave_root`` where set, else ``cfg.rave_equiv``, as at every
    other node."""
    return cfg.rave_root if cfg.rave_root > 0 else cfg.rave_equiv


def count_rave(cfg: SearchConfig) -> float:
    """RAVE's equivalence parameter in a search that counts a position:
    ``cfg.count_rave`` where set, else ``cfg.rave_equiv``."""
    return cfg.count_rave if cfg.count_rave > 0 else cfg.rave_equiv


def expand_visits_for(cfg: SearchConfig, size: int) -> int:
    """The visits a leaf needs before it gets its edges on a ``size`` board:
    ``cfg.expand_visits`` where set, else 2 up to 9x9 (chosen by matches
    there), 8 on 19x19 (Pachi's; a 19x19 expansion makes about 360 edges,
    and at 2 they were 99% of the tree's memory, 1,700 bytes a simulation),
    and in proportion to the board's area between (4 on 13x13)."""
    if cfg.expand_visits > 0:
        return cfg.expand_visits
    return max(2, min(8, round(2 + 6 * (size * size - 81) / (361 - 81))))


@dataclass(frozen=True)
class EngineConfig:
    board_size: int = 19        # size after start-up and before any boardsize
    komi: float = 7.5           # komi until the controller sends one
    rollouts: int = 10000       # simulations per genmove (the search stops earlier when decided)
    move_time: float | None = None  # seconds per move; None: rollouts only, unless clocks are set
    threads: int = 1            # search threads on the shared tree
    resign: float = 0.05        # resign when the best winrate falls below this (0: never);
                                # playout winrates run pessimistic in close endgames, so keep it low
    resign_margin: float = 3.0  # ... and only when the search expects to lose by more than this
                                # many points (a close endgame is played out)
    lag: float = 1.0            # seconds kept back from every clock for network and GUI lag
    seed: int = 0               # random seed; 0 picks one from the clock
    policy_only: bool = False   # play the network's best move, no search (needs a network)
    rules: str = "tromp-taylor"  # scoring rules (RULES above): the handicap
                                # compensation White gets; kgs-rules changes them
    policy_sample: int = 0      # policy-only: the first N moves of a game are drawn from the
                                # network's distribution instead of its best (variety; 0: never)
    policy_symmetries: int = 8  # policy-only: the mean of the network's probabilities over the
                                # board's 8 symmetries (one batch of 8 a move), or 1: as it is
    search: SearchConfig = field(default_factory=lambda: SearchConfig())

    def __post_init__(self) -> None:
        check_range("board size", self.board_size, 2, MAX_SIZE)
        check_komi(self.komi)
        check_range("rollouts", self.rollouts, 1, MAX_ROLLOUTS)
        if self.move_time is not None:
            check_range("seconds per move", self.move_time, 1e-3, MAX_SECONDS)
        check_range("threads", self.threads, 1, MAX_THREADS)
        check_range("resign", self.resign, 0.0, 0.999)
        check_range("resign margin", self.resign_margin, 0.0, 1000.0)
        check_range("lag", self.lag, 0.0, MAX_SECONDS)
        check_range("seed", self.seed, 0, 2**32 - 1)
        check_range("policy-sample moves", self.policy_sample, 0, 100_000)
        if self.policy_symmetries not in (1, 8):
            raise ValueError(f"policy symmetries {self.policy_symmetries}: 1 or 8")
        handicap_bonus(self.rules, 0)       # a ValueError names the rules allowed
