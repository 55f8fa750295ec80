"""End-to-end GTP tests of the real engine (engine.gtp + engine.player + gtp).

Golden transcripts: every ``tests/data/transcripts/NAME.gtp`` is served through
``gtp.serve`` to a fresh player built exactly as ``python -m engine.gtp``
builds it (``parse_args`` + ``Player`` + ``build_registry``), with the working
directory at ``tests/data`` (so ``loadsgf sgf/...`` finds the small SGF
files), and must print exactly ``NAME.ref``.  The transcripts hold only
deterministic answers: genmove is checked here in Python (a legal vertex, a
pass or resign), and final_score only on settled positions.

Everything runs in-process; the numba kernels are warmed up once for the
module.  One test starts the engine as a subprocess to check that stdout
carries GTP only.

To regenerate a .ref after an intended change, serve the .gtp the same way
and review the diff by hand: a .ref is a specification, not a snapshot.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.config import SearchConfig, expand_visits_for
from engine.gtp import build_registry, parse_args
from engine.player import Player
from gtp import parse, serve
from gtp.protocol import preprocess
from gtp.vertex import parse_vertex

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "tests" / "data"
TRANSCRIPTS = DATA / "transcripts"
SGF = DATA / "sgf"
CASES = sorted(TRANSCRIPTS.glob("*.gtp"))
ARGS = ["--rollouts", "100", "--seed", "1", "--quiet", "--max-memory", "4M"]

STANDARD_COMMANDS = {
    "protocol_version", "name", "version", "known_command", "list_commands", "quit",
    "boardsize", "clear_board", "komi", "play", "genmove", "undo", "showboard",
    "final_score", "fixed_handicap", "place_free_handicap", "set_free_handicap",
    "loadsgf", "printsgf", "time_settings", "time_left",
}
EXTENSIONS = {"final_status_list", "kgs-genmove_cleanup", "reg_genmove"}
SCORE_RE = re.compile(r"^(?:[BW]\+\d+(?:\.\d+)?|0)$")


@pytest.fixture(scope="module", autouse=True)
def warm_kernels() -> None:
    """Load (or compile) the numba kernels once for the whole module."""
    Player(parse_args(ARGS)).warm_up()


class Engine:
    """A fresh in-process engine, driven line by line through gtp.serve."""

    def __init__(self, args: list[str] | None = None) -> None:
        self.player = Player(parse_args(ARGS if args is None else args))
        self.registry = build_registry(self.player)

    def wire(self, line: str) -> str:
        """The exact bytes the engine writes for one command line."""
        out = io.StringIO()
        serve(self.registry, io.StringIO(line + "\n"), out)
        return out.getvalue()

    def ok(self, line: str) -> str:
        resp = self.registry.execute(parse(line))
        assert resp.ok, f"{line!r} failed: ? {resp.text}"
        return resp.text.strip("\n")

    def fail(self, line: str) -> str:
        resp = self.registry.execute(parse(line))
        assert not resp.ok, f"{line!r} succeeded: = {resp.text}"
        return resp.text

    def play_all(self, *moves: str) -> None:
        """Commands; a bare "b C3" / "w pass" is a play."""
        for m in moves:
            self.ok(f"play {m}" if m.split()[0].lower() in ("b", "w") else m)

    def state(self) -> tuple[str, str]:
        """Position and game record: showboard plus printsgf (history, komi)."""
        return self.ok("showboard"), self.ok("printsgf")


def wall_5x5(e: Engine, komi: str = "0") -> None:
    """5x5, black on column C, white on column D: settled, black 15 v white 10."""
    e.play_all("boardsize 5", f"komi {komi}")
    e.play_all(*(f"b C{r}" for r in range(1, 6)), *(f"w D{r}" for r in range(1, 6)))


def stones(board: str) -> dict[str, str]:
    """{vertex: "X" or "O"} from a showboard diagram."""
    lines = board.strip("\n").split("\n")
    letters = lines[0].split()
    found = {}
    for line in lines[1:-1]:
        cells = line.split()
        row = cells[0]
        for letter, cell in zip(letters, cells[1:1 + len(letters)]):
            if cell in "XO":
                found[f"{letter}{row}"] = cell
    return found


def assert_move_answer(answer: str, size: int) -> None:
    if answer.lower() in ("pass", "resign"):
        return
    assert parse_vertex(answer, size) is not None, answer


# ---------------------------------------------------------------------------
# golden transcripts


def test_transcripts_exist() -> None:
    names = {c.stem for c in CASES}
    assert {"admin", "setup", "rules", "handicap", "score", "sgf", "time", "errors"} <= names
    for case in CASES:
        assert case.with_suffix(".ref").is_file(), f"missing {case.with_suffix('.ref').name}"


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_transcript(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA)
    source = case.read_text(encoding="utf-8")
    expected = case.with_suffix(".ref").read_text(encoding="utf-8")
    out = io.StringIO()
    serve(build_registry(Player(parse_args(ARGS))), io.StringIO(source, newline=""), out)
    got = out.getvalue()
    if got != expected:  # a readable diff: command by command
        cmds = [ln for ln in source.splitlines() if preprocess(ln)]
        for cmd, a, b in zip(cmds, got.split("\n\n"), expected.split("\n\n")):
            assert a == b, f"{case.name}: answer to {cmd!r}\n got: {a!r}\nwant: {b!r}"
    assert got == expected


def test_engine_as_subprocess_writes_only_gtp_on_stdout() -> None:
    """``python -m engine.gtp`` (logging at INFO, to stderr) answers the admin
    transcript exactly; the trailing command after quit is not answered."""
    case = TRANSCRIPTS / "admin.gtp"
    proc = subprocess.run(
        [sys.executable, "-m", "engine.gtp", "--rollouts", "50", "--seed", "1",
         "--max-memory", "4M"],
        input=case.read_text(encoding="utf-8"), capture_output=True, text=True,
        cwd=ROOT, timeout=300)  # not tests/data: its gtp/ folder would shadow the gtp package
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == case.with_suffix(".ref").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------
# administrative commands


def test_list_commands_and_known_command() -> None:
    e = Engine()
    listed = e.ok("list_commands").split("\n")
    assert len(listed) == len(set(listed))
    assert STANDARD_COMMANDS | EXTENSIONS <= set(listed), \
        sorted(STANDARD_COMMANDS | EXTENSIONS - set(listed))
    for name in listed:
        assert name and name == name.strip() and " " not in name
        assert e.ok(f"known_command {name}") == "true"
    assert e.ok("known_command no_such_command") == "false"


def test_protocol_version_name_version() -> None:
    e = Engine()
    assert e.wire("protocol_version") == "= 2\n\n"
    assert e.wire("12 name") == "=12 delayed-go\n\n"
    version = e.ok("version")
    assert version and "\n" not in version


def test_command_line_options_set_the_initial_game() -> None:
    e = Engine(ARGS + ["--size", "9", "--komi", "0.5"])
    board = e.ok("showboard").split("\n")
    assert len(board) == 9 + 2
    assert board[0].split() == list("ABCDEFGHJ")
    assert e.ok("final_score") == "W+0.5"   # empty board: komi only


@pytest.mark.parametrize("argv", [["--size", "1"], ["--size", "26"], ["--rollouts", "0"],
                                  ["--threads", "0"], ["--resign", "1"], ["--time", "0"],
                                  ["--max-memory", "10K"], ["--frobnicate"],
                                  ["--param", "c_explore"], ["--param", "no_such=1"],
                                  ["--param", "expand_visits=2.5"], ["--param", "fpu=high"]])
def test_bad_command_line_exits(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        parse_args(argv)
    assert info.value.code == 2


def test_param_sets_search_constants_with_their_types() -> None:
    config = parse_args(["--param", "c_explore=0.35", "--param", "expand_visits=3",
                         "--param", "c_explore=0.4"])
    assert config.search.c_explore == 0.4          # the last one counts
    assert config.search.expand_visits == 3 and isinstance(config.search.expand_visits, int)


def test_expand_visits_follows_the_board_size_unless_set() -> None:
    auto = SearchConfig()
    assert [expand_visits_for(auto, n) for n in (5, 7, 9, 13, 19, 25)] == [2, 2, 2, 4, 8, 8]
    config = parse_args(["--param", "expand_visits=3"])
    assert [expand_visits_for(config.search, n) for n in (9, 19)] == [3, 3]


# ---------------------------------------------------------------------------
# bad input leaves the engine running and its position unchanged


def ko_position(e: Engine) -> None:
    """9x9 with a live ko (white may not retake at C3 at once) and a suicide
    point for white at A1."""
    e.play_all("boardsize 9", "komi 6.5",
               "b A2", "b B1", "b B3", "b C2", "b C4",
               "w D2", "w D4", "w E3", "w C3",
               "b D3")  # captures C3


BAD_COMMANDS = [
    "frobnicate", "7 frobnicate now", "42", "showboard now", "name extra",
    "known_command", "list_commands all",
    "play", "play b", "play b E5 E6", "play red E5", "play bw E5", "play b Z19", "play b A20",
    "play b I5", "play b J10", "play b A0", "play b 5E", "play b E", "play b pas",
    "play b C4", "play w C4", "play w D3", "play w C3", "play w A1",
    "genmove", "genmove red", "genmove b w", "kgs-genmove_cleanup", "kgs-genmove_cleanup x",
    "undo 1", "boardsize", "boardsize 0", "boardsize 1", "boardsize 26", "boardsize abc",
    "boardsize -9", "boardsize 9 9", "boardsize 9.0", "clear_board now",
    "komi", "komi abc", "komi nan", "komi 1 2",
    "fixed_handicap 2", "fixed_handicap 9", "fixed_handicap abc", "place_free_handicap 3",
    "set_free_handicap G7 G3", "set_free_handicap G7 G7",
    "time_settings 1 2", "time_settings a b c", "time_left b 10", "time_left red 10 0",
    "final_status_list", "final_status_list foo", "final_score now",
    "loadsgf", f"loadsgf {SGF / 'no-such-file.sgf'}", f"loadsgf {SGF / 'garbage.sgf'}",
    f"loadsgf {SGF / 'truncated.sgf'}", f"loadsgf {SGF / 'occupied.sgf'}",
    f"loadsgf {SGF / 'badkomi.sgf'}", f"loadsgf {SGF / 'tiny5.sgf'} 0",
    f"loadsgf {SGF / 'tiny5.sgf'} x", f"loadsgf {SGF}",
    "printsgf a b",
    # numbers out of range (issue 15): GTP ints end at 2^31 - 1, the rest
    # have the ranges of engine/config.py; paths that are not files
    "komi 1e28", "komi 10000000000", "komi inf", "komi -1000.5", "time_settings 1 2 99999999999",
    "time_left b 99999999999 0", "fixed_handicap 99999999999",
    "kgs-time_settings byoyomi 30 5 99999999999", "lz-analyze 99999999999",
    "kata-analyze interval 99999999999", "lz-analyze b 1e30", "dg-params rollouts 99999999999",
    "dg-params threads 1000", "dg-params time nan", "dg-params gfx_interval inf",
    "dg-params resign 1", "loadsgf /dev/zero", "printsgf /dev/full",
]


@pytest.mark.parametrize("command", BAD_COMMANDS)
def test_bad_input_fails_and_changes_nothing(command: str) -> None:
    e = Engine()
    ko_position(e)
    before = e.state()
    answer = e.wire(command)
    assert answer.startswith("?"), f"{command!r} answered {answer!r}"
    assert answer.endswith("\n\n") and answer.count("\n") == 2, repr(answer)  # one line
    assert e.state() == before
    # still running and still playing by the rules: the ko can be fought on
    e.ok("play w J9")
    e.ok("play b J1")
    e.ok("play w C3")


def test_errors_do_not_end_the_session() -> None:
    e = Engine()
    ko_position(e)
    script = "\n".join(BAD_COMMANDS + ["name"]) + "\n"
    out = io.StringIO()
    serve(e.registry, io.StringIO(script), out)
    answers = out.getvalue().split("\n\n")[:-1]
    assert len(answers) == len(BAD_COMMANDS) + 1
    assert all(a.startswith("?") for a in answers[:-1])
    assert answers[-1] == "= delayed-go"


# ---------------------------------------------------------------------------
# play, undo, rules


def test_undo_restores_each_position() -> None:
    e = Engine()
    e.ok("boardsize 5")
    moves = ["b C3", "w D3", "b D4", "w C4", "b B4", "w PASS", "b C5", "w pass"]  # C4 captured
    boards = [e.ok("showboard")]
    for m in moves:
        e.ok(f"play {m}")
        boards.append(e.ok("showboard"))
    assert "BLACK (X) has captured 1 stones" in boards[7]
    for expected in reversed(boards[:-1]):
        e.ok("undo")
        assert e.ok("showboard") == expected
    assert e.fail("undo") == "cannot undo"


def test_captured_stone_counts() -> None:
    e = Engine()
    e.play_all("boardsize 5", "w A1", "w B1", "b A2", "b B2", "b C1")  # captures two
    board = e.ok("showboard")
    assert "BLACK (X) has captured 2 stones" in board
    assert "WHITE (O) has captured 0 stones" in board
    assert board.split("\n")[5].startswith(" 1 . . X . . 1")


def test_showboard_layout_on_25x25() -> None:
    e = Engine()
    e.play_all("boardsize 25", "b Z25", "w A1", "b H8", "w J9")
    lines = e.ok("showboard").split("\n")
    assert len(lines) == 27
    letters = "A B C D E F G H J K L M N O P Q R S T U V W X Y Z"
    assert lines[0] == "   " + letters and lines[-1] == "   " + letters
    assert lines[1] == "25 " + ". " * 24 + "X 25"
    assert lines[25] == " 1 O" + " ." * 24 + " 1     BLACK (X) has captured 0 stones"
    assert lines[24].endswith(" 2     WHITE (O) has captured 0 stones")
    row8 = lines[1 + 25 - 8].split()
    assert row8[0] == "8" and row8[8] == "X"  # H is the 8th letter
    row9 = lines[1 + 25 - 9].split()
    assert row9[9] == "O"                     # J follows H: there is no I


def test_immediate_ko_retake_is_illegal() -> None:
    """Whatever the ko rule (simple or positional superko), an immediate retake is illegal."""
    e = Engine()
    ko_position(e)
    assert e.fail("play w C3") == "illegal move"


def test_play_takes_a_move_that_repeats_a_position_and_genmove_never_plays_one() -> None:
    """GNU Go and KGS's Japanese rules know only simple ko: the controller
    relays a move that recreates an earlier position.  The engine takes it
    (refusing it left it a move behind GNU Go in a CI game), can undo it,
    and never plays such a move itself."""
    e = Engine()
    e.play_all("boardsize 5", "b B4", "w C4", "b A3", "w B3", "w D3", "b B2", "w C2",
               "b C3",              # takes the ko
               "w E1", "b E2",      # threat and answer
               "w B3",              # retakes
               "b pass", "w pass")  # b C3 now recreates the position after b E2
    before = e.ok("showboard")
    e.ok("play b C3")
    assert e.ok("showboard") == "\n".join([
        "   A B C D E",
        " 5 . . . . . 5",
        " 4 . X O . . 4",
        " 3 X . X O . 3",
        " 2 . X O . X 2     WHITE (O) has captured 1 stones",
        " 1 . . . . O 1     BLACK (X) has captured 2 stones",
        "   A B C D E",
    ])
    assert_move_answer(e.ok("genmove w"), 5)   # the search goes on from there
    e.ok("undo")
    e.ok("undo")
    assert e.ok("showboard") == before
    assert e.ok("genmove b").upper() != "C3"


# ---------------------------------------------------------------------------
# genmove


def test_genmove_answers_a_legal_vertex_and_plays_it() -> None:
    e = Engine()
    e.ok("boardsize 9")
    empty = e.ok("showboard")
    answer = e.ok("genmove b")
    assert answer.lower() != "resign"
    assert_move_answer(answer, 9)
    if answer.lower() != "pass":
        assert stones(e.ok("showboard")) == {answer.upper(): "X"}
        # the engine's own move is in the record: the same point is now occupied
        assert e.fail(f"play w {answer}") == "illegal move"
    e.ok("undo")
    assert e.ok("showboard") == empty


@pytest.mark.parametrize("colours", [["w", "w", "b"], ["black", "WHITE", "B"]])
def test_genmove_in_any_colour_order(colours: list[str]) -> None:
    e = Engine()
    e.ok("boardsize 7")
    answers = []
    for c in colours:
        answers.append(e.ok(f"genmove {c}"))
        assert_move_answer(answers[-1], 7)
    on_board = stones(e.ok("showboard"))
    for c, a in zip(colours, answers):
        if a.lower() not in ("pass", "resign"):
            assert on_board[a.upper()] == ("X" if c.lower().startswith("b") else "O")


def test_genmove_with_only_pass_legal() -> None:
    """2x2, black on A1 and B2: both empty points are suicide for white."""
    e = Engine()
    e.play_all("boardsize 2", "b A1", "b B2")
    assert e.fail("play w A2") == "illegal move"
    assert e.ok("genmove w").lower() == "pass"


def test_genmove_passes_when_opponent_passed_and_the_count_wins() -> None:
    e = Engine()
    wall_5x5(e, komi="0")
    e.ok("play w pass")
    assert e.ok("genmove b").lower() == "pass"


def test_genmove_after_handicap_is_legal() -> None:
    e = Engine()
    e.ok("boardsize 9")
    handicap = e.ok("fixed_handicap 4").split()
    answer = e.ok("genmove w")
    assert_move_answer(answer, 9)
    assert answer.upper() not in handicap


def test_kgs_genmove_cleanup_answers_a_move() -> None:
    e = Engine()
    e.ok("boardsize 7")
    e.play_all("b D4", "w C3")
    assert_move_answer(e.ok("kgs-genmove_cleanup b"), 7)


def test_reg_genmove_answers_without_playing() -> None:
    """GNU Go's reg_genmove (regression suites): a move, nothing played,
    the same player still to move, also when asked for the other colour."""
    e = Engine()
    e.ok("boardsize 7")
    e.play_all("b D4")
    before = e.ok("showboard")
    assert_move_answer(e.ok("reg_genmove w"), 7)
    assert_move_answer(e.ok("reg_genmove b"), 7)
    assert e.ok("showboard") == before
    assert_move_answer(e.ok("genmove w"), 7)    # white was still to move
    assert e.ok("showboard") != before


def test_seeded_genmove_is_reproducible() -> None:
    """Fresh engines with the same seed, one search each on the same position
    (no tree reuse involved): the same move, simulations and winrate."""
    outcomes = set()
    for _ in range(40):   # one outcome in four differs: 40 tries leave no doubt
        e = Engine()
        e.play_all("boardsize 9", "b E5", "w C3", "b G5")
        move = e.ok("genmove w")
        result = e.player.last_result
        outcomes.add((move, result.sims, round(result.winrate, 9)))
        if len(outcomes) > 1:
            break
    assert len(outcomes) == 1, sorted(outcomes)


def test_genmove_under_time_settings() -> None:
    e = Engine(["--rollouts", "100000", "--seed", "1", "--quiet", "--max-memory", "4M"])
    e.play_all("boardsize 9", "time_settings 60 0 0", "time_left b 2 0")
    t0 = time.perf_counter()
    assert_move_answer(e.ok("genmove b"), 9)
    assert time.perf_counter() - t0 < 10   # the clock, not the 100000 rollouts, decides


# ---------------------------------------------------------------------------
# scoring


@pytest.mark.parametrize("rules,score", [(None, "B+4.5"), ("chinese", "W+0.5"),
                                         ("japanese", "W+0.5"), ("aga", "B+0.5"),
                                         ("new_zealand", "B+4.5")])
def test_final_score_gives_white_the_rules_handicap_compensation(rules, score) -> None:
    """Five black handicap stones on 5x5 (column C), White's wall on D:
    black area 15, white 10, komi 0.5.  KGS's rules (kgs-rules) give White
    a point per handicap stone (Chinese), one less (AGA) or none (New
    Zealand); Japanese territory counting comes to Chinese's result;
    without kgs-rules the count is Tromp-Taylor's, komi only.  The rules
    stay for the next game, and an even game has no compensation."""
    e = Engine()
    if rules:
        e.ok(f"kgs-rules {rules}")
    for _ in range(2):          # the second game: the rules were said once
        e.play_all("boardsize 5", "clear_board", "komi 0.5", "set_free_handicap C1 C2 C3 C4 C5")
        for r in range(1, 6):
            e.play_all(f"w D{r}", "b pass")
        assert e.ok("final_score") == score
    wall_5x5(e)
    assert e.ok("final_score") == "B+5"


def test_the_memory_cap_in_bytes(caplog, capsys) -> None:
    """--max-memory sets the tree's cap (both sets of pools); a full tree
    says so in the genmove log line, and a bad size exits with a message."""
    assert parse_args(["--max-memory", "512M"]).search.max_memory == 512 << 20
    assert parse_args([]).search.max_memory == 2 << 30
    for bad, why in (("lots", "not a size"), ("1000K", "too small: at least 1M")):
        with pytest.raises(SystemExit):
            parse_args(["--max-memory", bad])
        assert why in capsys.readouterr().err
    e = Engine(["--rollouts", "3000", "--seed", "1", "--max-memory", "1M"])
    with caplog.at_level("INFO", logger="engine"):
        e.ok("genmove b")
    assert "(full: --max-memory raises the cap)" in caplog.text


def test_the_rules_option_and_bad_rules() -> None:
    e = Engine([*ARGS, "--rules", "aga"])
    e.play_all("boardsize 5", "komi 0.5", "set_free_handicap C1 C2 C3 C4 C5",
               *(m for r in range(1, 6) for m in (f"w D{r}", "b pass")))
    assert e.ok("final_score") == "B+0.5"
    assert e.fail("kgs-rules ing") == "syntax error"
    assert e.ok("final_score") == "B+0.5"
    with pytest.raises(SystemExit):
        parse_args(["--rules", "ing"])


@pytest.mark.parametrize("komi,score", [("0", "B+5"), ("1.5", "B+3.5"), ("5", "0"),
                                        ("7.5", "W+2.5"), ("12.5", "W+7.5")])
def test_final_score_on_a_settled_board(komi: str, score: str) -> None:
    e = Engine()
    wall_5x5(e, komi)
    assert e.ok("final_score") == score
    assert SCORE_RE.match(score)


def test_final_score_removes_dead_stones() -> None:
    e = Engine()
    wall_5x5(e, "0")
    e.ok("play w A1")          # hopeless inside black's area
    assert e.ok("final_score") == "B+5"
    assert e.ok("final_status_list dead") == "A1"
    alive = set(e.ok("final_status_list alive").split())
    assert alive == {f"{c}{r}" for c in "CD" for r in range(1, 6)}
    assert e.ok("final_status_list seki") == ""


def test_final_score_after_two_passes_removes_dead_stones() -> None:
    """The controller asks for the score exactly here: after both passed."""
    e = Engine()
    wall_5x5(e, "0")
    e.play_all("w A1", "b pass", "w pass")
    assert e.ok("final_status_list dead") == "A1"
    assert e.ok("final_score") == "B+5"


def test_kgs_genmove_cleanup_after_two_passes_captures() -> None:
    """KGS sends kgs-genmove_cleanup after both players passed and disagreed."""
    e = Engine()
    wall_5x5(e, "0")
    e.play_all("w A1", "b pass", "w pass")
    assert e.ok("kgs-genmove_cleanup b").lower() != "pass"


# ---------------------------------------------------------------------------
# SGF


def test_loadsgf_answers_colour_and_sets_komi_and_size() -> None:
    e = Engine()
    assert e.ok(f"loadsgf {SGF / 'tiny5.sgf'}") == "white"
    sgf = e.ok("printsgf")
    assert "SZ[5]" in sgf and "KM[0.5]" in sgf
    assert e.ok(f"loadsgf {SGF / 'handicap9.sgf'}") == "white"
    sgf = e.ok("printsgf")
    assert "SZ[9]" in sgf and "HA[2]" in sgf and "KM[0.5]" in sgf


def test_printsgf_to_a_file(tmp_path: Path) -> None:
    e = Engine()
    e.play_all("boardsize 9", "b E5", "w C3")
    path = tmp_path / "game.sgf"
    assert e.wire(f"printsgf {path}") == "=\n\n"
    assert path.read_text(encoding="utf-8").strip() == e.ok("printsgf").strip()
    assert e.fail(f"printsgf {tmp_path / 'no-such-dir' / 'x.sgf'}").startswith("cannot write")


ROUND_TRIPS = {
    "tiny5": [f"loadsgf {SGF / 'tiny5.sgf'}"],
    "tiny5-partial": [f"loadsgf {SGF / 'tiny5.sgf'} 6"],
    "handicap9": [f"loadsgf {SGF / 'handicap9.sgf'}"],
    "fixed-handicap": ["boardsize 9", "komi 0.5", "fixed_handicap 4"],
    "fixed-handicap-moves": ["boardsize 9", "fixed_handicap 3", "play w E5", "play b E6",
                             "play w pass"],
    "free-handicap": ["boardsize 7", "set_free_handicap A1 B2 C3 D4"],
    "captures-ko-passes": ["boardsize 5", "play b B3", "play b C2", "play b C4", "play w D2",
                           "play w D4", "play w E3", "play w C3", "play b D3", "play w pass",
                           "play b PASS"],
    "white-first": ["boardsize 9", "komi -3", "play w E5", "play w E6", "play b D5"],
    "setup-white-to-move": [f"loadsgf {SGF / 'setup5.sgf'}"],
}
COLOUR_TO_MOVE = {"tiny5": "white", "tiny5-partial": "white", "handicap9": "white",
                  "fixed-handicap": "white", "fixed-handicap-moves": "black",
                  "free-handicap": "white", "captures-ko-passes": "white",
                  "white-first": "white", "setup-white-to-move": "white"}
@pytest.mark.parametrize("name", ROUND_TRIPS)
def test_printsgf_loadsgf_round_trip(name: str, tmp_path: Path) -> None:
    e = Engine()
    for cmd in ROUND_TRIPS[name]:
        e.ok(cmd)
    board, record = e.state()
    path = tmp_path / f"{name}.sgf"
    e.ok(f"printsgf {path}")
    other = Engine()
    other.ok("boardsize 13")
    assert other.ok(f"loadsgf {path}") == COLOUR_TO_MOVE[name]
    assert other.state() == (board, record)
    # the reloaded game has the same history: undo agrees all the way back
    while True:
        a, b = e.registry.execute(parse("undo")), other.registry.execute(parse("undo"))
        assert (a.ok, a.text) == (b.ok, b.text)
        if not a.ok:
            break
        assert e.ok("showboard") == other.ok("showboard")


def test_loadsgf_move_number_beyond_the_end_loads_everything() -> None:
    e, f = Engine(), Engine()
    assert e.ok(f"loadsgf {SGF / 'tiny5.sgf'} 1000") == f.ok(f"loadsgf {SGF / 'tiny5.sgf'}")
    assert e.state() == f.state()


# ---------------------------------------------------------------------------
# handicap


@pytest.mark.parametrize("size,n", [(9, 2), (9, 9), (13, 5), (19, 9), (8, 4), (7, 4)])
def test_fixed_handicap_stones_are_setup_not_moves(size: int, n: int) -> None:
    e = Engine()
    e.ok(f"boardsize {size}")
    stones_ = e.ok(f"fixed_handicap {n}").split()
    assert len(stones_) == len(set(stones_)) == n
    assert stones(e.ok("showboard")) == {s: "X" for s in stones_}
    assert e.fail("undo") == "cannot undo"    # handicap stones are not moves
    sgf = e.ok("printsgf")
    assert f"HA[{n}]" in sgf


@pytest.mark.parametrize("size", [5, 9, 19])
def test_place_free_handicap_counts(size: int) -> None:
    e = Engine()
    e.ok(f"boardsize {size}")
    for n in (2, 5, 10, size * size - 1):
        e.ok("clear_board")
        placed = e.ok(f"place_free_handicap {n}").split()
        assert 1 <= len(placed) <= n and len(set(placed)) == len(placed)
        for v in placed:
            parse_vertex(v, size)
        assert stones(e.ok("showboard")) == {s: "X" for s in placed}
    e.ok("clear_board")
    assert e.fail(f"place_free_handicap {size * size}") == "invalid number of stones"
    assert e.fail("place_free_handicap 1") == "invalid number of stones"
