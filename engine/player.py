"""The engine as a GTP player: the game, its rules around the board, and
move generation.  Implements gtp.ports.Player structurally (this module does
not import gtp).  Vertices are (col, row) tuples with row 0 at the bottom,
``None`` for a pass; colours are ``"b"``/``"w"``.  Failures are ValueErrors
whose text is the GTP error message.
"""

from __future__ import annotations

import dataclasses
import logging
import pathlib
import random
import time

import numpy as np
from numba.core import config as numba_config

from engine.board import (BLACK, COLOR, COLUMNS, EMPTY, MAX_SIZE, PASS, S_NEMPTY, S_PASSES,
                          WHITE, Board, IllegalMove, area_score, is_eyeish, libs_after)
from engine.config import EngineConfig, check_komi, handicap_bonus
from engine.patterns import load_gammas
from engine.search import Search, SearchResult, position_key
from engine.timecontrol import move_budget
from engine.game import (Game, fixed_handicap_points, format_score,
                         max_fixed_handicap, star_points)
from engine import SOURCE_DIGEST, sgf

log = logging.getLogger("engine")

_COLORS = {"b": BLACK, "w": WHITE}
OWNERSHIP_ROLLOUTS = 3000   # playouts of each search behind the count (final_score, final_status_list)
DEAD_THRESHOLD = 0.5        # a stone is dead when the other colour owns its point this surely
SEKI_THRESHOLD = 0.2        # a living stone whose point stays this undecided is in seki
UNSETTLED_THRESHOLD = 0.8   # a stone owned less surely than this (and not seki) is still in a fight

Vertex = tuple[int, int] | None


PLAY_ON = "play on"
"""_decide's answer when the player must not pass: the search's best other move."""


def _play_on(result: SearchResult) -> int:
    """The most visited candidate other than a pass; the search's move
    when there is none."""
    return next((cand.move for cand in result.candidates if cand.move != PASS), result.move)


def count_ownership(board: Board, black_first: np.ndarray, white_first: np.ndarray) -> np.ndarray:
    """The ownership a count reads, from two searches of ``board``: one with
    Black to move (``black_first``), one with White.  Every chain gets the
    mean over its stones of the search in which its opponent moves first;
    every other point the mean of the two.  At the end of a game a living
    group lives even when the opponent moves first (else the opponent would
    have played there before passing), and a dead one stays dead when its
    owner moves first; a single search lets the side to move rescue, in
    the light playouts, what it could not rescue in the game.  On 913
    held-out games that ended by counting, this named the record's winner
    in 98.5% of the 755 with a margin of 2.5 or more, against 97.7% for the
    search of the side to move alone and 96.7% for the owner moving first
    (README, "Ownership network")."""
    out = (black_first + white_first) / 2
    for chain in board.chains():
        opponent_first = white_first if board.color(chain[0]) == BLACK else black_first
        out[chain] = np.mean(opponent_first[chain])
    return out


class Player:
    name = "delayed-go"
    version = "0.1.0"

    def __init__(self, config: EngineConfig | None = None, network=None, start_worker=None,
                 ownership=None):
        """network: a policy network (``evaluate(planes, colors)``,
        ``supports(size)``, see nets/evaluator.py) or None; start_worker:
        ``start_worker(queue) -> worker`` starts the thread that feeds the
        search's delayed priors (nets/worker.py), ``worker.stop()`` ends it;
        ownership: an ownership network of the same interface (its
        ``evaluate`` gives the probability that the player to move owns
        each point), blended into the ownership of every search
        (``SearchConfig.own_doubt``), or None."""
        self.config = config or EngineConfig()
        self.game = Game(size=self.config.board_size, komi=self.config.komi)
        self.rules = self.config.rules      # kept across games, as the server said
        self.network = network
        self.ownership_network = ownership
        self._start_worker = start_worker
        self._worker = None
        if self.config.policy_only and network is None:
            raise ValueError("policy-only play needs a network")
        if self.config.policy_only and not network.supports(self.config.board_size):
            raise ValueError(f"policy-only play on {self.config.board_size}x"
                             f"{self.config.board_size}: the network does not serve that size")
        seed = self.config.seed or (time.time_ns() & 0xFFFFFFFF) | 1
        self.search = Search(self.config.search, load_gammas(), self.config.threads, seed)
        self._sampler = random.Random(seed)
        self._wire_network()
        self.last_result: SearchResult | None = None
        self.last_komi = self.scoring_komi      # the komi of last_result's search
        self._ownership: tuple | None = None
        self._count_cache: tuple | None = None

    def _wire_network(self) -> None:
        if self.ownership_network is not None:
            self.search.attach_ownership(self.ownership_network.evaluate,
                                         self.ownership_network.supports)
        if self.network is None:
            return
        feed = self._start_worker is not None and not self.config.policy_only
        self.search.attach_network(self.network.evaluate, self.network.supports, fed=feed,
                                   value=self._value_of(self.network))
        if feed:
            self._worker = self._start_worker(self.search.queue)

    @staticmethod
    def _value_of(network):
        """The network's evaluate_value where it has a value head, else None."""
        return network.evaluate_value if getattr(network, "has_value", False) else None

    def close(self) -> None:
        """Stop the network worker (quit)."""
        if self._worker is not None:
            self._worker.stop()
            self._worker = None

    def history(self) -> tuple[int, ...]:
        """The game's last moves, most recent first (the network's input)."""
        return tuple(p for _, p in reversed(self.game.moves[-4:]))

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) every kernel a GTP command
        can reach, on a throw-away 7x7 search, so that no command pays for it.
        A first start compiles them for a minute or more, silent otherwise:
        it says so first, at warning level (shown with --quiet too), so that
        a user or a GUI waiting for its first answer can tell it from a hang."""
        started = time.perf_counter()
        cache = pathlib.Path(numba_config.CACHE_DIR) if numba_config.CACHE_DIR else None
        marker = cache / f"warm-{SOURCE_DIGEST}" if cache else None
        if marker is None or not marker.exists():
            log.warning("compiling the engine's kernels: once for this version, a minute or "
                        "two (more on a busy machine); later starts load them from numba's "
                        "cache in seconds")
        spare = Search(self.config.search.__class__(max_memory=4 << 20), self.search.gammas, 1, 1)
        board = Game(size=7).board
        spare.run(board, 7.5, max_sims=64)
        if self.network is not None and self.network.supports(9):
            spare.attach_network(self.network.evaluate, self.network.supports, fed=False,
                                 value=self._value_of(self.network))
        if self.ownership_network is not None:
            spare.attach_ownership(self.ownership_network.evaluate, self.ownership_network.supports)
        if spare.network is not None or spare.ownership_net is not None:
            spare.run(Game(size=9).board, 7.5, max_sims=64)   # a network's first call is slow too
        warm = getattr(self.network, "warm", None)
        if warm is not None:
            # the forward passes the prior worker will run for the game's
            # size (traced on a CPU), made now rather than while the first
            # genmove searches without its priors
            warm(self.config.board_size, 1)
        area_score(board.b, board.s)
        log.info("kernels ready in %.1fs", time.perf_counter() - started)
        if marker is not None:
            try:
                marker.touch()
            except OSError:     # an unwritable cache: numba compiles every time, and we say so
                pass

    def reconfigure(self, **changes) -> None:
        """Change EngineConfig fields between moves (GTP parameter commands);
        a new thread count rebuilds the search, dropping its tree."""
        old, self.config = self.config, dataclasses.replace(self.config, **changes)
        if self.config.threads != old.threads:
            self.close()
            seed = self.config.seed or (time.time_ns() & 0xFFFFFFFF) | 1
            self.search = Search(self.config.search, self.search.gammas, self.config.threads, seed)
            self._wire_network()

    # helpers -------------------------------------------------------------
    def _point(self, v: Vertex) -> int:
        return PASS if v is None else self.game.board.point(*v)

    def _vertex(self, p: int) -> Vertex:
        return None if p == PASS else self.game.board.coords(p)

    # board and rules -----------------------------------------------------
    def board_size(self) -> int:
        return self.game.size

    def set_board_size(self, n: int) -> None:
        if not 2 <= n <= MAX_SIZE:
            raise ValueError("unacceptable size")
        if self.config.policy_only and not self.network.supports(n):
            raise ValueError("unacceptable size (the network does not serve it)")
        self.game.reset(n)
        self.search.clear()
        self.last_result = None         # a search of another board

    def clear(self) -> None:
        self.game.reset()
        self.search.clear()
        self.last_result = None

    def set_rules(self, rules: str) -> None:
        """Score by ``rules`` (engine/config.py RULES) from now on, this
        game and the next ones: kgsGtp says them once, before a game."""
        handicap_bonus(rules, 0)
        self.rules = rules

    @property
    def scoring_komi(self) -> float:
        """What White gets at the count: the komi, plus the handicap
        compensation of the rules in force (KGS's Chinese rules: a point per
        handicap stone).  ``final_score``, the search and the analysis all
        count with it; SGF files record the komi itself."""
        return self.game.komi + handicap_bonus(self.rules, self.game.handicap)

    def set_komi(self, komi: float) -> None:
        check_komi(komi)
        self.game.komi = komi
        self.search.clear()

    def play(self, color: str, move: Vertex) -> None:
        try:
            self._play(_COLORS[color], self._point(move))
        except IllegalMove:
            raise ValueError("illegal move") from None

    def _play(self, c: int, p: int) -> None:
        self.game.play(c, p)
        self.search.advance(p, self.game.board)

    def undo(self) -> None:
        self.game.undo()
        self.search.clear()

    def genmove(self, color: str, cleanup: bool = False, play: bool = True) -> Vertex | str:
        """Search and play a move for ``color``.  With ``cleanup`` (KGS's
        kgs-genmove_cleanup) it does not pass while the opponent has dead
        stones on the board, so that they get captured.  ``play=False``
        (GNU Go's reg_genmove) only answers the move: the position, and
        whose turn it is, stay as they were."""
        c = _COLORS[color]
        game = self.game
        to_move = game.board.to_move
        if to_move != c:
            game.board.to_move = c
            self.search.clear()
        if self.config.policy_only:
            move = self._policy_move(c, cleanup)
        else:
            move = self._search_move(c, color, cleanup)
        if move == "resign" or not play:
            if game.board.to_move != to_move:
                game.board.to_move = to_move
                self.search.clear()
            return move if move == "resign" else self._vertex(move)
        self._play(c, move)
        return self._vertex(move)

    def search_komi(self, c: int) -> float:
        """The komi the search plays with for ``c`` to move (dynamic komi,
        ``SearchConfig.dyn_komi``); the game is always counted with
        ``scoring_komi``.  A Monte-Carlo search that sees every move losing (as
        White giving handicap) or every move winning (as Black taking it)
        cannot tell its moves apart: pretending that the komi makes the
        game even restores the difference (Pachi's dynamic komi).

        * linear (1, the default, handicap games only): white gets
          ``dyn_komi_stone`` points per handicap stone more at the start,
          falling in a straight line to none at move ``dyn_komi_moves``
          (19x19; other sizes in proportion to their area);
        * adaptive (2, any game): the komi moves after each of ``c``'s
          moves so that its winrate stays between ``dyn_komi_low`` and
          ``dyn_komi_high`` (:meth:`_adapt_komi`)."""
        cfg, game = self.config.search, self.game
        if cfg.dyn_komi == 1:
            return self.scoring_komi + self.linear_komi_extra()
        if cfg.dyn_komi == 2:
            cap = self.adaptive_komi_limit()
            return self.scoring_komi + max(-cap, min(cap, game.komi_adjust[c]))
        return self.scoring_komi

    def adaptive_komi_limit(self) -> float:
        """How far the adaptive komi may stray from the real one at this
        move: ``dyn_komi_limit`` until move ``dyn_komi_moves``, then falling
        in a straight line to none at move ``dyn_komi_adapt_moves`` (19x19;
        other sizes in proportion to their area).  Without an end a lost
        endgame went on for hundreds of moves: a komi of a few points for
        White, held by the band, made its moves in Black's area look as
        good as passing (bench.match, 6 stones against GNU Go: 963 moves,
        lost by 10.5).  A limit falling from the first move instead cut
        White's komi in the middle game, where the rollouts, misled by the
        handicap stones, still wanted it (docs/handicap.md)."""
        cfg = self.config.search
        return cfg.dyn_komi_limit * self._komi_fade(cfg.dyn_komi_adapt_moves,
                                                    cfg.dyn_komi_moves)

    def _komi_fade(self, moves_19: int, from_19: int = 0) -> float:
        """1 until move ``from_19``, falling in a straight line to 0 at
        move ``moves_19``, both on 19x19 (in proportion to the board's area
        on other sizes): how much of a dynamic komi is left."""
        game = self.game
        scale = game.size * game.size / 361.0
        start = min(from_19, moves_19 - 1) * scale
        end = moves_19 * scale
        return min(1.0, max(0.0, (end - len(game.moves)) / (end - start)))

    def linear_komi_extra(self) -> float:
        """Linear dynamic komi: the points given to white on top of the komi
        at this move of a handicap game (0 in an even game)."""
        cfg, game = self.config.search, self.game
        h = game.handicap
        if h < 2:
            return 0.0
        return cfg.dyn_komi_stone * h * self._komi_fade(cfg.dyn_komi_moves)

    def _adapt_komi(self, c: int, result: SearchResult) -> None:
        """Adaptive dynamic komi, after a search for ``c`` at the komi
        ``search_komi(c)``: outside the winrate band, move the komi by
        half the count's lead (at least a point) against ``c`` when it wins
        too surely, in its favour when it loses too surely; never further
        from the real komi than :meth:`adaptive_komi_limit`.  The band holds the
        rollouts' winrate, not the one mixed with a value network's: the
        komi moves the rollouts at once, while the value head, which learnt
        from even games, hardly reads it (docs/handicap.md), and a band
        kept on the mix drove the komi ever further while White played
        slack moves."""
        cfg, game = self.config.search, self.game
        w = result.winrate if result.rollout_winrate is None else result.rollout_winrate
        if cfg.dyn_komi != 2 or result.sims == 0 or cfg.dyn_komi_low <= w <= cfg.dyn_komi_high:
            return
        pts = np.fromiter(game.board.points(), np.int64)
        black_minus_white = float(result.ownership[pts].sum())
        lead = (black_minus_white - self.search_komi(c)) * (1 if c == BLACK else -1)  # c's view
        step = max(1.0, abs(lead) / 2.0)
        towards_c = -1.0 if c == BLACK else 1.0        # komi change that helps c
        change = step * (towards_c if w < cfg.dyn_komi_low else -towards_c)
        adjust = game.komi_adjust[c] + change
        cap = self.adaptive_komi_limit()
        game.komi_adjust[c] = max(-cap, min(cap, adjust))

    def komi_helps(self, c: int) -> bool:
        """Whether the search's komi is on ``c``'s side of the real one: its
        winrate is then not the real game's."""
        extra = self.search_komi(c) - self.scoring_komi
        return extra > 0 if c == WHITE else extra < 0

    def resign_barred(self, c: int) -> bool:
        """Whether dynamic komi keeps ``c`` from resigning: while the
        search's komi is on its side, except in the adaptive mode from move
        ``dyn_komi_moves`` on (200 on 19x19, other sizes by area) when that
        komi is at its limit: the search then finds the game lost with all
        the help the komi may give.  Without that exception a lost game
        went on to move 400, where the limit runs out (bench.match, 6
        stones against GNU Go: 150 moves at a winrate of 0.000)."""
        if not self.komi_helps(c):
            return False
        cfg = self.config.search
        if cfg.dyn_komi != 2 or self._komi_fade(cfg.dyn_komi_moves) > 0:
            return True
        return abs(self.game.komi_adjust[c]) < self.adaptive_komi_limit()

    def _search_move(self, c: int, color: str, cleanup: bool) -> int | str:
        """The search's move for ``c`` (to move), with _decide's rules."""
        game = self.game
        budget = self._budget(c)
        self.last_komi = self.search_komi(c)
        result = self.search.run(game.board, self.last_komi, max_sims=self.config.rollouts,
                                 seconds=budget, history=self.history())
        self._ownership = (position_key(game.board), result)
        move = self._decide(c, result, cleanup)
        if move is PLAY_ON:
            result = self._search_without_pass(result, budget)
            move = _play_on(result)
        self.last_result = result
        self._log_result(color, result, move)
        self._adapt_komi(c, result)
        return move

    def move_probabilities(self, color: int | None = None,
                           symmetries: int = 1) -> dict[int, float]:
        """The network's probability of each legal move (empty without one);
        ``symmetries`` 8: the mean over the board's symmetries."""
        board = self.game.board
        if color is not None and color != board.to_move:
            board = board.copy()
            board.to_move = color
        return self.search.network_policy(board, self.history(), symmetries)

    def _policy_move(self, c: int, cleanup: bool) -> int | str:
        """The paper's "CNN alone": the network's most probable legal move
        that fills no own eye, its probabilities averaged over the board's
        8 symmetries unless ``policy_symmetries`` is 1 (during the first
        ``policy_sample`` moves of a game, one drawn in proportion to the
        network's probabilities instead), a pass where the network has a pass output and ranks it
        first.  It passes when nothing else is left, or when the opponent
        passed and a short playout count says the game is won (and, in
        cleanup mode, no dead opponent stones are left); it resigns when
        the opponent passed, the count loses, and that search's winrate
        for it (on at least 200 visits) is below ``resign`` (the game is
        over and lost: playing on would only fill the board), and before
        any pass when a value network and a search agree that the game is
        lost (:meth:`_policy_lost`)."""
        game = self.game
        board = game.board
        started = time.perf_counter()
        probs, value = self.search.network_judgement(board, self.history(),
                                                     self.config.policy_symmetries,
                                                     self.scoring_komi)
        ranked = sorted(probs.items(), key=lambda kv: -kv[1])
        allowed = (p for p, _ in ranked if p == PASS or self._may_play(p, c))
        if len(game.moves) < self.config.policy_sample:
            moves = list(allowed)
            weights = [probs[p] for p in moves]
            move = (self._sampler.choices(moves, weights=weights)[0] if sum(weights) > 0
                    else moves[0] if moves else PASS)
        else:
            move = next(allowed, PASS)
        if self._opponent_passed():
            margin, after = self._count_after_pass(c)
            dead = [p for p in self._dead_stones(after.ownership) if board.color(p) != c]
            if margin > 0 and not (cleanup and dead):
                move = PASS
            elif margin < 0 and self._lost(c, 1.0 - after.winrate, after.visits, after.ownership):
                move = "resign"
        elif self._policy_lost(c, value):
            move = "resign"
        best = ", ".join(f"{board.name(p)} {prob:.3f}" for p, prob in ranked[:5])
        judged = "" if value is None else f" | value {value:.3f}"
        log.info("genmove %s (policy only): %s in %.3fs%s | %s", "b" if c == BLACK else "w",
                 "resign" if move == "resign" else board.name(move),
                 time.perf_counter() - started, judged, best)
        return move

    def _policy_lost(self, c: int, value: float | None) -> bool:
        """Whether policy-only play resigns a game the opponent has not yet
        passed in: the value network gives ``c`` less than ``resign``, and a
        short search of the position (:meth:`_position_search`) finds it
        lost by the search's own rule (:meth:`_lost`).  The value alone
        is not trusted: it once gave 0.03 to a game that the network then
        won by 7.5 points.  Without a value head policy-only play resigns
        only after a pass, as before; never in the first ``size`` moves, nor
        while dynamic komi bars it (:meth:`resign_barred`)."""
        game = self.game
        if (value is None or self.config.resign <= 0 or value >= self.config.resign
                or len(game.moves) <= game.size or self.resign_barred(c)):
            return False
        result = self._position_search()
        return self._lost(c, result.winrate, result.visits, result.ownership)

    def _budget(self, c: int) -> float | None:
        budget = move_budget(self.game.clocks[c], int(self.game.board.s[S_NEMPTY]), self.config.lag)
        if self.config.move_time is not None:
            budget = self.config.move_time if budget is None else min(budget, self.config.move_time)
        return budget

    def _lost(self, c: int, winrate: float, visits: int, ownership: np.ndarray) -> bool:
        """Whether ``c`` may resign on a search's ``winrate`` for it: below
        ``resign`` on at least 200 visits, not barred by a dynamic komi on
        its side (:meth:`resign_barred`), and the score the search
        expects (its ownership summed, the komi off) behind by more than
        ``resign_margin`` points: a close endgame, where the playouts'
        winrate falls to nothing over half a point, is played out."""
        return (self.config.resign > 0 and visits >= 200 and winrate < self.config.resign
                and not self.resign_barred(c)
                and self.expected_lead(c, ownership) < -self.config.resign_margin)

    def expected_lead(self, c: int, ownership: np.ndarray, board: Board | None = None) -> float:
        """The area score a search's ``ownership`` (+1 black .. -1 white per
        point of ``board``, the game's by default) expects, from ``c``'s
        side, with the komi of the count."""
        board = board or self.game.board
        pts = np.fromiter(board.points(), np.int64)
        lead = float(ownership[pts].sum()) - self.scoring_komi
        return lead if c == BLACK else -lead

    def _decide(self, c: int, result: SearchResult, cleanup: bool) -> int | str:
        """The search's choice, with the rules around it: resign when lost
        (judged on at least 200 visits, the kept subtree's included: a search
        that stops early on a reused tree runs fewer new simulations);
        when the opponent passed, pass if the count wins and play on if it
        loses; pass first only on a finished board that the count wins; in
        cleanup mode no pass while the opponent has dead stones.  PLAY_ON:
        the search's best move other than a pass."""
        game = self.game
        if len(game.moves) > game.size and self._lost(c, result.winrate, result.visits,
                                                      result.ownership):
            return "resign"
        if cleanup and any(game.board.color(p) != c for p in self._dead_stones(result.ownership)):
            return PLAY_ON
        if self._opponent_passed():
            if self._margin(c, result.ownership) > 0:
                # the count wins; but a fight the playouts have not settled is
                # played out first while the search still likes its move, so
                # that the opponent's dead-stone list cannot differ from ours
                if not (result.move != PASS and result.winrate >= 0.5
                        and self._unsettled(result.playout_ownership)):
                    # ... and by the count the game will be scored with
                    return PASS if self._count_after_pass(c)[0] > 0 else PLAY_ON
            elif result.move == PASS:
                # the count loses: passing would end the game lost, however
                # the playouts rate it
                return PLAY_ON
        elif result.move == PASS and not (self._finished(c, result.playout_ownership)
                                          and self._margin(c, result.ownership) > 0):
            # a pass while points are still open gives them away (the
            # playouts after a pass can misjudge a fight, and RAVE can
            # starve the real moves of visits), and one on a lost count
            # invites the opponent's game-ending pass: play on
            return PLAY_ON
        return result.move

    def _count_after_pass(self, c: int) -> tuple[float, SearchResult]:
        """(margin for ``c``, the search) once ``c`` has passed: a short
        search of the position after the pass, the opponent to move, kept
        for the reports that follow.  Every chain is judged with the
        opponent moving first: ``c``'s own as final_score's count judges
        them (``_count``), the opponent's more warily than the count, which
        lets ``c`` move first against them; so a pass back that wins here
        wins the count too, and on an unfinished board, where the opponent
        could still rescue a group, ``c`` plays on instead (under area
        rules a move in one's own area costs nothing).  The genmove
        search's own ownership can differ: its tree, sure that the pass
        ends the game, leaves the fight to random playouts, where the
        opponent's killing move is rarely found."""
        after = self.game.board.copy()
        after.play(PASS, c)
        result = self.search.run(after, self.scoring_komi,
                                 max_sims=min(self.config.rollouts, OWNERSHIP_ROLLOUTS),
                                 history=(PASS,) + self.history(), counting=True)
        self._ownership = (position_key(after), result)
        return self._margin(c, result.ownership), result

    def _search_without_pass(self, result: SearchResult, budget: float | None) -> SearchResult:
        """When the player must play on but the search liked a pass best:
        search on with the pass pruned at the root, for what is left of the
        move's budget (at least a quarter of it), so that the other moves
        get the visits the pass took.  An interrupted search, or one with
        no other move, is answered as it is."""
        if (self.search.interrupted or result.move != PASS
                or not any(cand.move != PASS for cand in result.candidates)):
            return result
        game = self.game
        sims = max(self.config.rollouts - result.sims, self.config.rollouts // 4, 1)
        seconds = None if budget is None else max(budget - result.seconds, budget / 4)
        log.info("genmove: the search prefers a pass that the rules above refuse here "
                 "(winrate %.3f): searching on without it", result.winrate)
        return self.search.run(game.board, self.search_komi(game.board.to_move), max_sims=sims,
                               seconds=seconds, avoid=(PASS,), history=self.history())

    def _finished(self, c: int, own: np.ndarray) -> bool:
        """Nothing is left for ``c`` to play: no stone still in a fight
        (see _unsettled), and no empty point that the playouts leave to
        neither side (UNSETTLED_THRESHOLD) where ``c`` can play without
        putting its own chain in atari: a dame, an open border.  The shared
        liberties of a seki are self-atari for both and do not count."""
        return not self._unsettled(own) and not self._open_point(c, own)

    def _shared_liberty(self, p: int) -> bool:
        """The empty point ``p`` touches chains of both colours and neither
        colour can play there without self-atari (a liberty of a seki)."""
        board = self.game.board
        b, s = board.b, board.s
        w = board.width
        colours = {board.color(q) for q in (p - w, p - 1, p + 1, p + w)}
        if not {BLACK, WHITE} <= colours:
            return False
        return all(board.legality(p, c) is not None or libs_after(b, s, p, c) <= 1
                   for c in (BLACK, WHITE))

    def _open_point(self, c: int, own: np.ndarray) -> bool:
        """An empty point left to neither side where ``c`` can play without
        self-atari (see _finished)."""
        board = self.game.board
        b, s = board.b, board.s
        return any(board.color(p) == EMPTY and abs(own[p]) < UNSETTLED_THRESHOLD
                   and self._may_play(p, c) and libs_after(b, s, p, c) >= 2
                   for p in board.points())

    def pass_faults(self, color: str) -> list[str]:
        """Why a pass by ``color`` in the current position breaks the rules
        genmove follows (empty when it does not): the count with dead
        stones removed loses, or, when the opponent has not just passed,
        points are still open or a fight unsettled.  The count is
        final_score's (``_count``); open points and fights are judged by the
        playouts of the last search of this position, else of a short one.
        A pass is never at fault where ``color`` has no legal move but to
        fill its own eyes: genmove passes there too, lost count or not."""
        c = _COLORS[color]
        if not self._has_move(c):
            return []
        self.ownership()
        played_out = self._ownership[1].playout_ownership
        faults = []
        margin = self._margin(c, self._count(self.game.board, self.history())[0])
        if margin < 0:
            faults.append(f"the count loses by {-margin:g}")
        if not self._opponent_passed():
            if self._unsettled(played_out):
                faults.append("stones still in a fight")
            elif self._open_point(c, played_out):
                faults.append("points still open")
        return faults

    def _may_play(self, p: int, c: int) -> bool:
        """``p`` is a legal move for ``c`` that fills none of its own eyes:
        a move the engine considers besides a pass."""
        board = self.game.board
        return not is_eyeish(board.b, board.s, p, c) and board.legality(p, c) is None

    def _has_move(self, c: int) -> bool:
        """``c`` has a move besides a pass (see _may_play)."""
        board = self.game.board
        return any(board.color(p) == EMPTY and self._may_play(p, c) for p in board.points())

    def _opponent_passed(self) -> bool:
        """The last move of the game was a pass."""
        return bool(self.game.moves) and self.game.moves[-1][1] == PASS

    def _margin(self, c: int, own: np.ndarray) -> float:
        """The count with dead stones removed, from ``c``'s side (positive: a win)."""
        return (1 if c == BLACK else -1) * self._score_with_dead_removed(own)

    def _unsettled(self, own: np.ndarray) -> bool:
        """Stones the playouts neither keep alive nor capture at least
        UNSETTLED_THRESHOLD of the time, seki (nearly even) left out."""
        board = self.game.board
        for p in board.points():
            k = board.color(p)
            if k in (BLACK, WHITE):
                support = abs(own[p])
                if SEKI_THRESHOLD <= support < UNSETTLED_THRESHOLD:
                    return True
        return False

    def _log_result(self, color: str, r: SearchResult, move: int | str) -> None:
        best = ", ".join(f"{self.game.board.name(c.move)} {c.visits} {c.winrate:.3f}"
                         for c in r.candidates[:5])
        c = _COLORS[color]
        komi = self.search_komi(c)
        log.info("genmove %s: %s | %d rollouts in %.2fs (%.0f/s), winrate %.3f%s, tree %d nodes %.1f MiB%s"
                 " | %s", color, move if isinstance(move, str) else self.game.board.name(move),
                 r.sims, r.seconds, r.sims_per_s, r.winrate,
                 f" at dynamic komi {komi:g} (real {self.scoring_komi:g})"
                 if komi != self.scoring_komi else "", r.nodes, r.tree_bytes / (1 << 20),
                 " (full: --max-memory raises the cap)" if self.search.tree.full else "", best)
        if r.net is not None:
            n = r.net
            log.info("network: %d evaluations (%.0f/s, mean batch %.1f, %d with a value), "
                     "%d requested, queue %d,"
                     " prior lag median %.1f ms p95 %.1f ms, dropped %d, deferred %d,"
                     " visit threshold %g", n.evaluated,
                     n.evaluated / r.seconds if r.seconds > 0 else 0.0, n.mean_batch, n.valued,
                     n.requested, n.queue, n.lag_median_ms, n.lag_p95_ms, n.dropped,
                     n.deferred, n.nn_visits)

    # handicap ------------------------------------------------------------
    def _require_empty(self) -> None:
        if not self.game.board.is_empty() or self.game.moves:
            raise ValueError("board not empty")

    def fixed_handicap(self, n: int) -> list[Vertex]:
        self._require_empty()
        if not 2 <= n <= max_fixed_handicap(self.game.size):
            raise ValueError("invalid number of stones")
        pts = fixed_handicap_points(self.game.size, n)
        self._set_handicap(pts)
        return pts

    def place_free_handicap(self, n: int) -> list[Vertex]:
        """The fixed placement where it exists; more stones (or boards
        without one) continue on the star-point lines, spread out."""
        self._require_empty()
        size = self.game.size
        if not 2 <= n < size * size:
            raise ValueError("invalid number of stones")
        if n <= max_fixed_handicap(size):
            pts = fixed_handicap_points(size, n)
        else:
            pts = list(star_points(size))
            rest = sorted(((c, r) for c in range(size) for r in range(size) if (c, r) not in pts),
                          key=lambda v: (min(v[0], v[1], size - 1 - v[0], size - 1 - v[1]) < 2,
                                         (v[0] + v[1]) % 2, v[1], v[0]))
            pts = (pts + rest)[:n]
        self._set_handicap(pts)
        return pts

    def set_free_handicap(self, vertices: list[Vertex]) -> None:
        self._require_empty()
        size = self.game.size
        if not 2 <= len(vertices) < size * size:
            raise ValueError("invalid number of stones")
        if any(v is None for v in vertices) or len(set(vertices)) != len(vertices):
            raise ValueError("bad vertex list")
        self._set_handicap(vertices)

    def _set_handicap(self, vertices: list[Vertex]) -> None:
        self.game.place_setup([(BLACK, self._point(v)) for v in vertices], WHITE)
        self.search.clear()

    # scoring -------------------------------------------------------------
    def ownership(self) -> np.ndarray:
        """Per padded point, +1 surely black .. -1 surely white: from the
        last search if it was of this position, else from a short one."""
        return self._position_search().ownership

    def _position_search(self) -> SearchResult:
        """The last search if it was of this position, else a short one (the
        count's simulations, the real komi), kept for the next ask."""
        key = position_key(self.game.board)
        if self._ownership is None or self._ownership[0] != key:
            sims = min(self.config.rollouts, OWNERSHIP_ROLLOUTS)
            result = self.search.run(self.game.board, self.scoring_komi, max_sims=sims,
                                     history=self.history(), counting=True)
            self._ownership = (key, result)
        return self._ownership[1]

    def count_searches(self, board: Board, history: tuple[int, ...]) -> list[tuple[Board, SearchResult]]:
        """The searches behind the count of ``board``: one with each colour
        to move (Black first), from a board on which no pass has been played
        yet, so that a first pass does not end the game inside the tree.
        Returns each searched board with its result."""
        sims = min(self.config.rollouts, OWNERSHIP_ROLLOUTS)
        out = []
        for c in (BLACK, WHITE):
            b = board.copy()
            b.to_move = c
            b.s[S_PASSES] = 0
            out.append((b, self.search.run(b, self.scoring_komi, max_sims=sims, history=history,
                                           counting=True)))
        return out

    def _count(self, board: Board, history: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(ownership, playout ownership) of ``board`` as the game's count
        reads it (final_score, final_status_list, pass_faults): the
        two ``count_searches`` combined by ``count_ownership``; the playout
        ownership is the mean of the two searches'.  One count per position
        and komi, whoever is to move."""
        key = (board.size, board.hash, board.ko, self.scoring_komi)
        if self._count_cache is None or self._count_cache[0] != key:
            (_, first_b), (_, first_w) = self.count_searches(board, history)
            own = count_ownership(board, first_b.ownership, first_w.ownership)
            played_out = (first_b.playout_ownership + first_w.playout_ownership) / 2
            self._count_cache = (key, (own, played_out))
        return self._count_cache[1]

    def _chain_ownership(self, own: np.ndarray) -> np.ndarray:
        """``own`` with every stone given its chain's mean: a chain lives or
        dies as a whole, while the blend of playouts and network takes the
        network's word on some of its points and the playouts' on others."""
        out = own.copy()
        for chain in self.game.board.chains():
            out[chain] = np.mean(own[chain])
        return out

    def _dead_stones(self, own: np.ndarray) -> list[int]:
        """Stones of the chains the ownership (the playouts', with an
        ownership network blended in) mostly gives to the other colour,
        judged on the chain's mean (``_chain_ownership``)."""
        board = self.game.board
        own = self._chain_ownership(own)
        dead = []
        for p in board.points():
            k = board.color(p)
            if (k == BLACK and own[p] < -DEAD_THRESHOLD) or (k == WHITE and own[p] > DEAD_THRESHOLD):
                dead.append(p)
        return dead

    def _score_with_dead_removed(self, own: np.ndarray) -> float:
        board = self.game.board.copy()
        for p in self._dead_stones(own):
            board.b[COLOR, p] = 3 - board.b[COLOR, p]   # the capturer's stone
        black, white = area_score(board.b, board.s)
        return black - white - self.scoring_komi

    def final_score(self) -> str:
        """Area score after removing the stones the count judges dead."""
        own, _ = self._count(self.game.board, self.history())
        return format_score(self._score_with_dead_removed(own))

    def final_status_list(self, status: str) -> list[Vertex]:
        """alive / dead / seki stones.  Seki: the living stones next to a
        shared liberty (an empty point the playouts leave to neither side
        where a move of either colour would be self-atari or illegal), and
        living chains the ownership leaves undecided (on their mean).  The
        shared liberty is the playouts' to judge, like the other questions
        of what is still disputed: the ownership network learnt a seki's
        stones as alive and its liberties as no one's, but it is not sure
        of them, and where the playouts doubt it is the network that speaks
        (search.blend_ownership)."""
        if status not in ("alive", "dead", "seki"):
            raise ValueError("syntax error")
        board = self.game.board
        own, played_out = self._count(board, self.history())
        dead = set(self._dead_stones(own))
        chain_own = self._chain_ownership(own)
        seki = {p for p in board.points() if board.color(p) in (BLACK, WHITE)
                and p not in dead and abs(chain_own[p]) < SEKI_THRESHOLD}
        w = board.width
        for p in board.points():
            if board.color(p) != EMPTY or abs(played_out[p]) >= SEKI_THRESHOLD or \
                    not self._shared_liberty(p):
                continue
            for q in (p - w, p - 1, p + 1, p + w):
                if board.color(q) in (BLACK, WHITE) and q not in dead:
                    seki.update(board.chain(q))
        if status == "dead":
            chosen = dead
        elif status == "seki":
            chosen = seki
        else:
            chosen = {p for p in board.points() if board.color(p) in (BLACK, WHITE)} - dead - seki
        return [self._vertex(p) for p in sorted(chosen)]

    # time ----------------------------------------------------------------
    def time_settings(self, main_time: int, byo_yomi_time: int, byo_yomi_stones: int) -> None:
        for clock in self.game.clocks.values():
            clock.main_time = float(main_time)
            clock.byo_yomi_time = float(byo_yomi_time)
            clock.byo_yomi_stones = byo_yomi_stones
            clock.time_left = None
            clock.stones_left = 0

    def time_left(self, color: str, time_left: int, stones: int) -> None:
        clock = self.game.clocks[_COLORS[color]]
        clock.time_left = float(time_left)
        clock.stones_left = stones

    # SGF -----------------------------------------------------------------
    def loadsgf(self, path: str, move_number: int | None = None) -> str:
        record = sgf.load(path)
        if not 2 <= record.size <= MAX_SIZE:
            raise ValueError(f"cannot load {path}: board size {record.size} not supported")
        if move_number is not None and move_number < 1:
            raise ValueError("move number must be at least 1")
        try:
            check_komi(record.komi)
        except ValueError as e:
            raise ValueError(f"cannot load {path}: {e}") from None
        game = Game(size=record.size, komi=record.komi)
        moves = record.moves if move_number is None else record.moves[:move_number - 1]
        try:
            if record.setup:
                game.place_setup([(c, game.board.point(*v)) for c, v in record.setup],
                                 record.to_move)
            for c, v in moves:
                game.play(c, PASS if v is None else game.board.point(*v))
        except IllegalMove as e:
            raise ValueError(f"cannot load {path}: {e} in the game record") from None
        self.game = game
        self.search.clear()
        self.last_result = None
        return "b" if game.to_move == BLACK else "w"

    def printsgf(self) -> str:
        g = self.game
        setup = [(c, g.board.coords(p)) for c, p in g.setup]
        moves = [(c, self._vertex(p)) for c, p in g.moves]
        handicap = len(setup) if setup and all(c == BLACK for c, _ in setup) else 0
        return sgf.dumps(g.size, g.komi, setup, moves, handicap, to_move=g.first_to_move)

    # display -------------------------------------------------------------
    def showboard(self) -> str:
        """GNU Go's layout: letters above and below, row numbers both sides,
        X black, O white, . empty, + star points."""
        board = self.game.board
        size = board.size
        stars = {board.point(*v) for v in star_points(size)}
        letters = " ".join(COLUMNS[:size])
        lines = ["   " + letters]
        caps_b, caps_w = board.captures
        for r in range(size - 1, -1, -1):
            cells = []
            for col in range(size):
                p = board.point(col, r)
                k = board.b[COLOR, p]
                cells.append("X" if k == BLACK else "O" if k == WHITE else
                             "+" if p in stars else ".")
            line = f"{r + 1:2d} {' '.join(cells)} {r + 1}"
            if r == 1:
                line += f"     WHITE (O) has captured {caps_w} stones"
            elif r == 0:
                line += f"     BLACK (X) has captured {caps_b} stones"
            lines.append(line)
        lines.append("   " + letters)
        return "\n" + "\n".join(lines)
