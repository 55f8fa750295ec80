"""The extension command groups of gtp.commands, against fakes: analysis
arguments and formats, GoGui, KGS and gomill commands.  Golden transcripts
of them, with the fake player, are in transcripts_ext/."""

from __future__ import annotations

import io
import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from gtp_fakes import FakePlayer

from gtp import Command, GtpError, Str, serve, standard_registry
from gtp.commands import (AnalysisRequest, MoveFilter, add_analysis_commands,
                          add_gogui_commands, add_gomill_commands, add_kgs_commands,
                          format_kata_info, format_lz_info, gfx_lines, live_gfx,
                          parse_analysis_args)

TRANSCRIPTS = Path(__file__).resolve().parent / "transcripts_ext"
CASES = sorted(TRANSCRIPTS.glob("*.gtp"))


# -- fakes --------------------------------------------------------------------


@dataclass
class Move:
    move: tuple[int, int] | None
    visits: int
    winrate: float
    prior: float
    lcb: float
    pv: list
    score_lead: float = 0.0


@dataclass
class Report:
    color: str
    moves: list[Move]
    ownership: list[float] | None = None


def sample_report(color: str = "b", size: int = 3) -> Report:
    return Report(color, [
        Move((1, 1), 30, 0.61, 0.25, 0.55, [(1, 1), (0, 0), None, (2, 2)], 2.5),
        Move(None, 5, 0.40, 0.05, 0.2, [None], 2.5),
        Move((0, 2), 3, 0.3333333, 0.5, 0.0, [(0, 2)], 2.5),
    ], [1.0, 0.5, 0.0, -0.25, 0.0, 0.25, -1.0, 0.0, 1.0][: size * size])


class FakeAnalyst:
    """Emits the sample report every interval; genmove answers B2."""

    def __init__(self) -> None:
        self.requests: list[AnalysisRequest] = []

    def analyze(self, request, stream, emit) -> None:
        self.requests.append(request)
        emit(sample_report(request.color or "b"))
        while not stream.wait(request.interval):
            emit(sample_report(request.color or "b"))

    def genmove_analyze(self, request, stream, emit):
        self.requests.append(request)
        emit(sample_report(request.color))
        emit(Report(request.color, []))          # no moves: no line
        return (1, 1)


class FakeGui:
    def __init__(self) -> None:
        self.values = {"rollouts": "100", "ponder": "0"}

    def priors(self, color):
        return {(0, 0): 0.2, (1, 1): 0.8, (2, 2): 0.4}

    def report(self, color):
        return sample_report(color or "b")

    def ownership(self):
        return [1.0, 0.5, 0.0, -0.25, 0.0, 0.25, -1.0, 0.0, 1.0]

    def params(self):
        return [("string", "rollouts", self.values["rollouts"]),
                ("bool", "ponder", self.values["ponder"])]

    def set_param(self, key, value):
        if key not in self.values:
            raise ValueError(f"unknown parameter: {key}")
        self.values[key] = value


def full_registry(player=None):
    player = player or FakePlayer(size=3)
    reg = standard_registry(player)
    reg.add("final_status_list", lambda status: "", args=(Str,))   # stands in for the engine's
    add_analysis_commands(reg, FakeAnalyst())
    add_gogui_commands(reg, FakeGui(), prefix="t-")
    over: list = []
    rules: list = []
    add_kgs_commands(reg, player, game_over=lambda: over.append(1), rules=rules.append)
    add_gomill_commands(reg, lambda: "fake engine\nrollouts 100", lambda: "nothing yet")
    return reg, over, rules


# -- golden transcripts -------------------------------------------------------


def test_extension_transcripts_exist() -> None:
    assert CASES
    for case in CASES:
        assert case.with_suffix(".ref").is_file()


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_extension_transcript(case: Path) -> None:
    source = case.read_text(encoding="utf-8")
    expected = case.with_suffix(".ref").read_text(encoding="utf-8")
    out = io.StringIO()
    serve(full_registry()[0], io.StringIO(source), out)
    assert out.getvalue() == expected


# -- analysis arguments -------------------------------------------------------


@pytest.mark.parametrize("tokens, color, interval", [
    ([], None, 1.0), (["B", "50"], "b", 0.5), (["50"], None, 0.5), (["interval", "50"], None, 0.5),
    (["white"], "w", 1.0), (["w", "interval", "7"], "w", 0.07), (["b", "0"], "b", 0.01),
])
def test_analysis_colour_and_interval(tokens, color, interval) -> None:
    req = parse_analysis_args(tokens, 19)
    assert req.color == color and req.interval == pytest.approx(interval)


def test_analysis_keywords() -> None:
    req = parse_analysis_args(
        "b 10 minmoves 3 maxmoves 5 avoid w D4,Q16 2 allow b pass,C3 1 ownership true".split(),
        19, kata=True)
    assert (req.min_moves, req.max_moves, req.ownership) == (3, 5, True)
    assert req.avoid == [MoveFilter("w", [(3, 3), (15, 15)], 2)]
    assert req.allow == [MoveFilter("b", [None, (2, 2)], 1)]


@pytest.mark.parametrize("args", [
    "b x", "b 10 frobnicate", "b 10 interval", "b 10 interval x", "b 10 minmoves -1",
    "b 10 avoid b D4", "b 10 avoid red D4 1", "b 10 avoid b Z99 1", "b 10 avoid b D4 0",
    "b 10 avoid b , 1", "b 10 ownership true", "b 10 10", "10 b",
])
def test_bad_analysis_arguments(args: str) -> None:
    with pytest.raises(GtpError):
        parse_analysis_args(args.split(), 19)


def test_kata_only_keywords_and_genmove_colour() -> None:
    with pytest.raises(GtpError):
        parse_analysis_args(["b", "ownership", "maybe"], 19, kata=True)
    with pytest.raises(GtpError):
        parse_analysis_args(["50"], 19, need_color=True)
    assert parse_analysis_args(["w"], 19, need_color=True).color == "w"


# -- analysis formats ---------------------------------------------------------


def test_lz_format() -> None:
    line = format_lz_info(sample_report(), 3)
    assert line == ("info move B2 visits 30 winrate 6100 prior 2500 lcb 5500 order 0"
                    " pv B2 A1 pass C3"
                    " info move pass visits 5 winrate 4000 prior 500 lcb 2000 order 1 pv pass"
                    " info move A3 visits 3 winrate 3333 prior 5000 lcb 0 order 2 pv A3")


def test_kata_format_with_ownership_from_the_player_to_move() -> None:
    line = format_kata_info(sample_report("w"), 3, ownership=True)
    first = line.split(" info ")[0]
    assert first == ("info move B2 visits 30 winrate 0.610000 scoreLead 2.500 prior 0.250000"
                     " lcb 0.550000 order 0 pv B2 A1 pass C3")
    tail = line.split(" ownership ")[1].split()
    assert tail == ["-1.0000", "-0.5000", "0.0000", "0.2500", "0.0000", "-0.2500",
                    "1.0000", "0.0000", "-1.0000"]
    assert "ownership" not in format_kata_info(sample_report("w"), 3, ownership=False)


def test_streaming_commands_through_the_registry() -> None:
    reg, _, _ = full_registry()
    resp = reg.execute(Command(None, "lz-analyze", ["b", "1"]))
    assert resp.ok and resp.text.startswith("\ninfo move B2 visits 30 winrate 6100")
    resp = reg.execute(Command(None, "kata-analyze", ["w", "1", "ownership", "true"]))
    assert " ownership -1.0000 " in resp.text
    resp = reg.execute(Command(None, "lz-genmove_analyze", ["b", "1"]))
    assert resp.text.endswith("\nplay B2") and resp.text.count("info move") == 3
    for name in ("lz-genmove_analyze", "kata-genmove_analyze", "genmove_analyze"):
        bad = reg.execute(Command(None, name, []))
        assert not bad.ok and bad.text == "syntax error"


# -- GoGui --------------------------------------------------------------------


def test_gogui_analyze_commands_are_registered_commands() -> None:
    reg, _, _ = full_registry()
    lines = reg.call("gogui-analyze_commands").split("\n")
    kinds = set()
    for line in lines:
        kind, label, command = line.split("/")
        kinds.add(kind)
        assert label and reg.known(command.split()[0]), line
    assert {"gfx", "pspairs", "dboard", "plist", "param"} <= kinds
    assert "plist/Dead stones/final_status_list dead" in lines


def test_gogui_displays() -> None:
    reg, _, _ = full_registry()
    priors = reg.call("t-priors", ["b"]).split("\n")
    assert priors[0] == "INFLUENCE B2 1.00 C3 0.50 A1 0.25"
    assert priors[1] == "LABEL B2 80 C3 40 A1 20"
    assert reg.call("t-visits") == "B2 30 A3 3"
    assert reg.call("t-winrates", ["w"]) == "B2 61 A3 33"
    assert reg.call("t-pv", ["w"]) == "VAR w B2 b A1 w PASS b C3"
    assert reg.call("t-ownership") == "\n1.00 0.50 0.00\n-0.25 0.00 0.25\n-1.00 0.00 1.00"


class SparseGui(FakeGui):
    """A GUI source with a tiny prior and a barely visited move."""

    def priors(self, color):
        return {(0, 0): 0.2, (1, 1): 0.79, (2, 2): 0.004}

    def report(self, color):
        return Report("b", [Move((1, 1), 300, 0.72, 0.79, 0.7, [(1, 1)], 0.0),
                            Move((0, 0), 30, 0.55, 0.2, 0.4, [(0, 0)], 0.0),
                            Move((2, 2), 10, 0.90, 0.004, 0.3, [(2, 2)], 0.0)], [0.0] * 9)


def test_gogui_displays_leave_out_what_means_nothing() -> None:
    """The prior map marks only moves it labels (C3's 0.4% would be an
    unlabelled speck); the winrate map leaves out C3's 90% at 10 visits
    (under a tenth of B2's 300), the visit map keeps it."""
    reg = standard_registry(FakePlayer(size=3))
    add_gogui_commands(reg, SparseGui(), prefix="t-")
    assert reg.call("t-priors").split("\n") == ["INFLUENCE B2 1.00 A1 0.25", "LABEL B2 79 A1 20"]
    assert reg.call("t-winrates") == "B2 72 A1 55"
    assert reg.call("t-visits") == "B2 300 A1 30 C3 10"


def test_cputime_counts_this_process() -> None:
    reg, _, _ = full_registry()
    before = float(reg.call("cputime"))
    end = time.process_time() + 0.05
    while time.process_time() < end:
        pass
    after = float(reg.call("cputime"))
    assert 0.0 <= before and after - before >= 0.04


def test_gogui_params() -> None:
    reg, _, _ = full_registry()
    assert reg.call("t-params") == "[string] rollouts 100\n[bool] ponder 0"
    reg.call("t-params", ["rollouts", "5"])
    assert reg.call("t-params").startswith("[string] rollouts 5\n")
    for args in (["rollouts"], ["a", "b", "c"], ["nope", "1"]):
        assert not reg.execute(Command(None, "t-params", args)).ok


def test_live_gfx_blocks() -> None:
    block = live_gfx(sample_report("w"), 3)
    lines = block.split("\n")
    assert lines[0] == "gogui-gfx:" and block.endswith("\n\n")
    # the PV's numbered stones cover B2, A1 and C3: only A3's label would show
    assert "LABEL A3 3" in lines and "SQUARE B2" in lines
    assert "VAR w B2 b A1 w PASS b C3" in lines
    assert "TEXT B2 winrate 0.610 visits 30/38" in lines
    assert live_gfx(None, 3) == "gogui-gfx: CLEAR\n"
    assert gfx_lines(Report("b", []), 3) == []


# -- KGS ----------------------------------------------------------------------


@pytest.mark.parametrize("args, expected", [
    (["none"], (0, 1, 0)),
    (["absolute", "600"], (600, 0, 0)),
    (["byoyomi", "600", "30", "5"], (600, 30, 1)),
    (["byoyomi", "600", "30", "0"], (600, 0, 0)),
    (["canadian", "600", "300", "25"], (600, 300, 25)),
    (["CANADIAN", "0", "300", "25"], (0, 300, 25)),
])
def test_kgs_time_settings_map_onto_time_settings(args, expected) -> None:
    player = FakePlayer(size=3)
    reg, _, _ = full_registry(player)
    assert reg.execute(Command(None, "kgs-time_settings", args)).ok
    assert player.time_control == expected


@pytest.mark.parametrize("args", [
    [], ["none", "1"], ["absolute"], ["absolute", "x"], ["absolute", "-5"],
    ["byoyomi", "600", "30"], ["canadian", "600", "300", "0"], ["fischer", "600", "10"],
])
def test_kgs_time_settings_errors(args) -> None:
    player = FakePlayer(size=3)
    reg, _, _ = full_registry(player)
    resp = reg.execute(Command(None, "kgs-time_settings", args))
    assert not resp.ok and resp.text == "syntax error"
    assert player.time_control is None


def test_kgs_game_over_and_rules() -> None:
    reg, over, rules = full_registry()
    assert reg.call("kgs-game_over") == "" and over == [1]
    reg.call("kgs-rules", ["Japanese"])
    assert rules == ["japanese"]
    assert not reg.execute(Command(None, "kgs-rules", ["ing"])).ok


# -- gomill -------------------------------------------------------------------


def test_gomill_commands() -> None:
    reg, _, _ = full_registry()
    assert reg.call("gomill-describe_engine") == "fake engine\nrollouts 100"
    assert reg.call("gomill-explain_last_move") == "nothing yet"
    cpu = reg.call("gomill-cpu_time")
    assert re.fullmatch(r"\d+\.\d{3}", cpu) and float(cpu) > 0
