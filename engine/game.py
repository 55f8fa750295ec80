"""A game of Go: the board plus everything the rules need beyond it.

Keeps the setup stones (handicap, SGF AB/AW), the move record for undo and
SGF output, the komi and the clocks.  Undo replays the record from the
setup, which keeps the board kernels free of any undo machinery.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.board import BLACK, PASS, WHITE, Board, IllegalMove


def _edge_distance(size: int) -> int:
    """0-based line of the corner star points: the 3rd line up to 11x11,
    the 4th from 12x12 on."""
    return 2 if size <= 11 else 3


def star_points(size: int) -> list[tuple[int, int]]:
    """Hoshi as (col, row): 3-3 points up to 11x11, 4-4 from 12x12 on (as
    GNU Go, GTP's reference engine), the centre of odd boards and the side
    stars of odd boards from 13x13."""
    if size < 7:
        return []
    d = _edge_distance(size)
    lo, hi, mid = d, size - 1 - d, size // 2
    pts = [(lo, lo), (hi, lo), (lo, hi), (hi, hi)]
    if size % 2 == 1:
        pts.append((mid, mid))
        if size >= 13:
            pts += [(lo, mid), (hi, mid), (mid, lo), (mid, hi)]
    return pts


def max_fixed_handicap(size: int) -> int:
    """GTP v2 §4.1.1: 9 stones on odd boards from 9x9, else 4; none below 7x7."""
    if size < 7:
        return 0
    return 9 if size % 2 == 1 and size >= 9 else 4


def fixed_handicap_points(size: int, n: int) -> list[tuple[int, int]]:
    """The GTP v2 fixed handicap placement of n stones, as (col, row)."""
    if not 2 <= n <= max_fixed_handicap(size):
        raise ValueError("invalid number of stones")
    d = _edge_distance(size)
    lo, hi, mid = d, size - 1 - d, size // 2
    corners = [(lo, lo), (hi, hi), (lo, hi), (hi, lo)]  # D4 Q16 D16 Q4 on 19x19
    sides = [(lo, mid), (hi, mid), (mid, lo), (mid, hi)]  # D10 Q10 K4 K16
    centre = (mid, mid)
    if n <= 4:
        return corners[:n]
    if n == 5:
        return corners + [centre]
    if n == 6:
        return corners + sides[:2]
    if n == 7:
        return corners + sides[:2] + [centre]
    if n == 8:
        return corners + sides
    return corners + sides + [centre]


@dataclass
class Clock:
    """GTP time_settings / time_left for one colour (seconds, Canadian
    byo-yomi: ``byo_yomi_stones`` stones in ``byo_yomi_time``; 0 stones with
    byo-yomi time 0 means no byo-yomi; byo_yomi_time > 0 and stones 0 means
    no time limit)."""
    main_time: float = 0.0
    byo_yomi_time: float = 0.0
    byo_yomi_stones: int = 0
    time_left: float | None = None
    stones_left: int = 0

    @property
    def unlimited(self) -> bool:
        return self.byo_yomi_time > 0 and self.byo_yomi_stones == 0


@dataclass
class Game:
    size: int = 19
    komi: float = 7.5
    setup: list[tuple[int, int]] = field(default_factory=list)   # (colour, point)
    moves: list[tuple[int, int]] = field(default_factory=list)   # (colour, point)
    clocks: dict[int, Clock] = field(default_factory=lambda: {BLACK: Clock(), WHITE: Clock()})

    def __post_init__(self) -> None:
        self.board = Board(self.size)
        self.first_to_move = BLACK
        # adaptive dynamic komi (engine/player.py): points given to white on top of
        # the komi in the searches for each colour, moved after each of its moves
        self.komi_adjust = {BLACK: 0.0, WHITE: 0.0}

    # changes -------------------------------------------------------------
    def reset(self, size: int | None = None) -> None:
        if size is not None:
            self.size = size
        self.setup.clear()
        self.moves.clear()
        self.board = Board(self.size)
        self.first_to_move = BLACK
        self.komi_adjust = {BLACK: 0.0, WHITE: 0.0}

    def play(self, color: int, p: int) -> int:
        """Play a move of either colour (GTP allows any order).

        A move that repeats an earlier position is taken: whoever sends it
        (a server, a GTP controller, a game record) judges superko by its
        own rules, and simple-ko rules (GNU Go's, KGS's Japanese) allow it.
        Refusing it would leave the engine a move behind the game.  The
        engine's own moves never repeat a position: the search leaves them
        out.  Occupied points, suicide and the simple-ko retake are refused."""
        n = self.board.play(p, color, superko=False)
        self.moves.append((color, p))
        return n

    def place_setup(self, stones: list[tuple[int, int]], to_move: int) -> None:
        """Put setup stones on the board (handicap, SGF AB/AW)."""
        board = self.board.copy()
        for color, p in stones:
            board.place(p, color)
        board.history = [board.hash]
        board.to_move = to_move
        self.board = board
        self.setup.extend(stones)
        self.first_to_move = to_move

    def undo(self) -> None:
        if not self.moves:
            raise ValueError("cannot undo")
        moves = self.moves[:-1]
        setup = list(self.setup)
        first = self.first_to_move
        adjust = dict(self.komi_adjust)
        self.reset()
        self.komi_adjust = adjust
        if setup:
            self.place_setup(setup, first)
        for color, p in moves:
            self.play(color, p)

    # questions -----------------------------------------------------------
    @property
    def to_move(self) -> int:
        return self.board.to_move

    @property
    def handicap(self) -> int:
        """Handicap stones: black setup stones, none white, White to move
        first (0 for an even game)."""
        if self.first_to_move != WHITE or not self.setup \
                or any(c != BLACK for c, _ in self.setup):
            return 0
        return len(self.setup)

    def is_over(self) -> bool:
        """Two passes in a row end the game."""
        return len(self.moves) >= 2 and self.moves[-1][1] == PASS and self.moves[-2][1] == PASS


def format_score(score: float) -> str:
    """GTP final_score text: ``B+3.5``, ``W+7.5`` or ``0``."""
    if score == 0:
        return "0"
    return f"{'B' if score > 0 else 'W'}+{abs(score):g}"


__all__ = ["Game", "Clock", "IllegalMove", "star_points", "fixed_handicap_points",
           "max_fixed_handicap", "format_score"]
