"""Tests for gtp.registry, gtp.commands and gtp.server (in process)."""

from __future__ import annotations

import io
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from gtp_fakes import FakePlayer

from gtp import (
    Color,
    Command,
    Float,
    GtpError,
    Int,
    IntArg,
    Many,
    Optional,
    Player,
    Registry,
    Response,
    Str,
    Vertex,
    serve,
    standard_registry,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


def run(registry: Registry, text: str) -> str:
    out = io.StringIO()
    serve(registry, io.StringIO(text), out)
    return out.getvalue()


# -- Registry ------------------------------------------------------------------------


def make_registry(size: int = 19) -> Registry:
    return Registry(board_size=lambda: size)


def test_typed_arguments_are_converted() -> None:
    reg = make_registry(9)
    seen: list[object] = []
    reg.add("cmd", lambda *a: seen.extend(a), args=(Color, Vertex, Int, Float, Str))
    assert reg.call("cmd", ["WHITE", "j9", "7", "6.5", "x"]) == ""
    assert seen == ["w", (8, 8), 7, 6.5, "x"]


@pytest.mark.parametrize(
    "args",
    [[], ["b"], ["b", "D4", "1"], ["x", "D4"], ["b", "I5"], ["b", "K1"], ["b", ""]],
)
def test_bad_arguments_are_syntax_errors(args: list[str]) -> None:
    reg = make_registry(9)
    reg.add("play", lambda c, v: "ok", args=(Color, Vertex))
    with pytest.raises(GtpError) as info:
        reg.call("play", args)
    assert info.value.text == "syntax error"


@pytest.mark.parametrize("token", ["abc", "-1", "+1", "1.5", "", "1e3", "٣"])
def test_int_is_unsigned_decimal(token: str) -> None:
    reg = make_registry()
    reg.add("n", lambda n: str(n), args=(Int,))
    with pytest.raises(GtpError):
        reg.call("n", [token])


def test_signed_int() -> None:
    reg = make_registry()
    reg.add("n", lambda n: str(n), args=(IntArg(signed=True),))
    assert reg.call("n", ["-12"]) == "-12"
    assert reg.call("n", ["+3"]) == "3"
    with pytest.raises(GtpError):
        reg.call("n", ["-"])


@pytest.mark.parametrize("token", ["abc", "nan", "inf", "-inf", ""])
def test_float_rejects_non_finite(token: str) -> None:
    reg = make_registry()
    reg.add("komi", lambda k: str(k), args=(Float,))
    with pytest.raises(GtpError):
        reg.call("komi", [token])


def test_optional_arguments() -> None:
    reg = make_registry()
    reg.add("load", lambda path, n: f"{path}:{n}", args=(Str, Optional(Int)))
    reg.add("opt", lambda a, b: f"{a}:{b}", args=(Optional(Int, default=1), Optional(Str, "z")))
    assert reg.call("load", ["f.sgf"]) == "f.sgf:None"
    assert reg.call("load", ["f.sgf", "12"]) == "f.sgf:12"
    assert reg.call("opt", []) == "1:z"
    assert reg.call("opt", ["5"]) == "5:z"
    for bad in (["f.sgf", "x"], ["f.sgf", "1", "2"], []):
        with pytest.raises(GtpError):
            reg.call("load", bad)


def test_many_arguments() -> None:
    reg = make_registry(9)
    reg.add("stones", lambda vs: repr(vs), args=(Many(Vertex, min_count=1),))
    reg.add("words", lambda first, rest: f"{first}|{','.join(rest)}", args=(Str, Many(Str)))
    assert reg.call("stones", ["A1", "pass", "j9"]) == "[(0, 0), None, (8, 8)]"
    assert reg.call("words", ["a"]) == "a|"
    assert reg.call("words", ["a", "b", "c"]) == "a|b,c"
    for bad in ([], ["A1", "Z1"]):
        with pytest.raises(GtpError):
            reg.call("stones", bad)


def test_raw_handler_gets_all_tokens() -> None:
    reg = Registry()
    reg.add("lz-analyze", lambda args: " ".join(reversed(args)), raw=True)
    assert reg.call("lz-analyze", ["b", "100", "minmoves", "2"]) == "2 minmoves 100 b"
    assert reg.call("lz-analyze", []) == ""


def test_decorator_registration() -> None:
    reg = make_registry()

    @reg.command("double", args=(Int,))
    def double(n: int) -> str:
        return str(2 * n)

    assert double(2) == "4"
    assert reg.call("double", ["21"]) == "42"


def test_names_known_and_duplicates() -> None:
    reg = Registry()
    reg.add("zeta", lambda: "")
    reg.add("alpha", lambda: "")
    assert reg.names() == ["alpha", "zeta"]
    assert reg.known("zeta") and "alpha" in reg and not reg.known("beta")
    assert len(reg) == 2
    with pytest.raises(ValueError):
        reg.add("zeta", lambda: "again")
    reg.add("zeta", lambda: "again", replace=True)
    assert reg.call("zeta") == "again"
    reg.remove("zeta")
    assert reg.names() == ["alpha"]


@pytest.mark.parametrize(
    "args",
    [
        (Optional(Int), Int),  # required after optional
        (Many(Int), Int),  # Many not last
        (Optional(Int), Many(Int)),  # both
        ("int",),  # not an ArgType
    ],
)
def test_invalid_specs_rejected(args: tuple[object, ...]) -> None:
    with pytest.raises((ValueError, TypeError)):
        Registry().add("x", lambda *a: "", args=args)  # type: ignore[arg-type]


def test_invalid_registrations_rejected() -> None:
    with pytest.raises(ValueError):
        Registry().add("v", lambda v: "", args=(Vertex,))  # no board_size
    with pytest.raises(ValueError):
        Registry().add("raw", lambda a: "", args=(Int,), raw=True)
    for name in ("", "two words", "a#b"):
        with pytest.raises(ValueError):
            Registry().add(name, lambda: "")


def test_execute_converts_failures() -> None:
    reg = Registry()
    reg.add("gtp_fail", lambda: (_ for _ in ()).throw(GtpError("cannot score")))
    reg.add("value_fail", lambda: (_ for _ in ()).throw(ValueError("illegal move")))
    table: dict[str, str] = {}
    reg.add("bug", lambda: table["missing"])
    reg.add("ok", lambda: None)
    reg.add("bye", lambda: "", ends_session=True)
    assert reg.execute(Command(None, "gtp_fail", [])) == Response(False, "cannot score")
    assert reg.execute(Command(None, "value_fail", [])) == Response(False, "illegal move")
    resp = reg.execute(Command(None, "bug", []))
    assert not resp.ok and resp.text.startswith("internal error: ")
    assert reg.execute(Command(None, "nope", [])).text == "unknown command"
    assert reg.execute(Command(None, "", [])).text == "unknown command"
    assert reg.execute(Command(None, "ok", [])) == Response(True, "")
    assert reg.execute(Command(None, "bye", [])).quit
    assert not reg.execute(Command(None, "bye", ["x"])).quit  # syntax error: no quit


# -- server ------------------------------------------------------------------------------


def test_server_survives_handler_bugs(caplog: pytest.LogCaptureFixture) -> None:
    reg = Registry()

    def boom() -> str:
        raise RuntimeError("boom")

    reg.add("boom", boom)
    reg.add("empty_error", lambda: (_ for _ in ()).throw(KeyError()))
    reg.add("ping", lambda: "pong")
    with caplog.at_level(logging.ERROR, logger="gtp"):
        out = run(reg, "1 boom\n2 empty_error\n3 ping\n")
    assert out == "?1 internal error: boom\n\n?2 internal error: KeyError\n\n=3 pong\n\n"
    assert "Traceback" in caplog.text or "RuntimeError" in caplog.text


def test_server_one_response_per_command_and_eof() -> None:
    reg = Registry()
    reg.add("ping", lambda: "pong")
    assert run(reg, "") == ""
    assert run(reg, "ping") == "= pong\n\n"  # last line without newline
    assert run(reg, "# c\n\nping\n\n\n") == "= pong\n\n"


def test_server_stops_after_quit() -> None:
    reg = standard_registry(FakePlayer())
    inp = io.StringIO("name\nquit\nname\n")
    out = io.StringIO()
    serve(reg, inp, out)
    assert out.getvalue() == "= FakePlayer\n\n=\n\n"
    assert inp.readline() == "name\n"  # left unread


def test_server_flushes_after_each_response() -> None:
    class Recorder(io.StringIO):
        flushes: list[str] = []

        def flush(self) -> None:
            self.flushes.append(self.getvalue())

    reg = Registry()
    reg.add("ping", lambda: "pong")
    out = Recorder()
    serve(reg, io.StringIO("ping\nping\n"), out)
    assert out.flushes == ["= pong\n\n", "= pong\n\n= pong\n\n"]


# -- standard commands ----------------------------------------------------------------------


def test_fake_player_satisfies_protocol() -> None:
    assert isinstance(FakePlayer(), Player)


def test_standard_command_set() -> None:
    reg = standard_registry(FakePlayer())
    assert reg.names() == sorted(
        """protocol_version name version known_command list_commands quit boardsize
        clear_board komi play genmove undo showboard final_score fixed_handicap
        place_free_handicap set_free_handicap loadsgf printsgf time_settings
        time_left""".split()
    )
    assert reg.call("list_commands").split("\n") == reg.names()
    assert "kgs-genmove_cleanup" not in reg


def test_extension_commands_show_in_list_and_known() -> None:
    player = FakePlayer()
    reg = standard_registry(player)
    reg.add("kgs-genmove_cleanup", lambda color: "pass", args=(Color,))
    assert reg.call("known_command", ["kgs-genmove_cleanup"]) == "true"
    assert "kgs-genmove_cleanup" in reg.call("list_commands").split("\n")


def test_genmove_resign_and_bad_results() -> None:
    player = FakePlayer()
    reg = standard_registry(player)
    player.genmove_result = "resign"
    assert reg.call("genmove", ["b"]) == "resign"
    player.genmove_result = None
    assert reg.call("genmove", ["w"]) == "pass"
    player.genmove_result = (19, 0)  # off the board: an engine bug
    resp = reg.execute(Command(None, "genmove", ["b"]))
    assert not resp.ok and resp.text.startswith("internal error")
    player.genmove_result = "D4"
    assert reg.execute(Command(None, "genmove", ["b"])).text.startswith("internal error")


def test_vertices_use_current_board_size() -> None:
    player = FakePlayer()
    reg = standard_registry(player)
    reg.call("play", ["b", "T19"])
    reg.call("boardsize", ["9"])
    with pytest.raises(GtpError):
        reg.call("play", ["b", "T19"])
    reg.call("play", ["b", "J9"])
    assert player.stones == {(8, 8): "b"}


def test_showboard_starts_on_its_own_line() -> None:
    reg = standard_registry(FakePlayer(size=3))
    out = run(reg, "showboard\n")
    assert out.startswith("= \n   A B C\n 3 . . . 3\n")
    assert out.endswith("   A B C\n\n")


def test_loadsgf_and_printsgf(tmp_path: Path) -> None:
    player = FakePlayer(size=9)
    reg = standard_registry(player)
    game = tmp_path / "game.sgf"
    game.write_text("(;GM[1]SZ[9];B[ee])")
    bad = tmp_path / "bad.sgf"
    bad.write_text("not sgf")
    assert reg.call("loadsgf", [str(game)]) == "black"
    assert reg.call("loadsgf", [str(game), "2"]) == "white"
    assert reg.execute(Command(None, "loadsgf", [str(bad)])).text == "cannot load file: malformed SGF"
    reg.call("play", ["b", "E5"])
    assert reg.call("printsgf") == "(;FF[4]GM[1]SZ[9]KM[0]\n;B[ee])"
    target = tmp_path / "out.sgf"
    assert reg.call("printsgf", [str(target)]) == ""
    assert target.read_text() == "(;FF[4]GM[1]SZ[9]KM[0]\n;B[ee])"
    resp = reg.execute(Command(None, "printsgf", [str(tmp_path / "no" / "dir.sgf")]))
    assert not resp.ok and resp.text.startswith("cannot write file")


def test_time_commands_reach_player() -> None:
    player = FakePlayer()
    reg = standard_registry(player)
    reg.call("time_settings", ["300", "30", "5"])
    reg.call("time_left", ["white", "120", "3"])
    assert player.time_control == (300, 30, 5)
    assert player.clock == {"w": (120, 3)}


def test_boardsize_above_25_never_reaches_player() -> None:
    class Permissive(FakePlayer):
        def set_board_size(self, n: int) -> None:
            self.size = n

    reg = standard_registry(Permissive())
    assert reg.execute(Command(None, "boardsize", ["26"])).text == "unacceptable size"
    assert reg.execute(Command(None, "boardsize", ["0"])).text == "unacceptable size"


def test_gtp_package_imports_no_engine_code() -> None:
    code = (
        "import sys, gtp, gtp.client, gtp.commands, gtp.ports, gtp.registry, gtp.server\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('engine', 'nets', 'torch', 'numpy', 'numba')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, check=True, timeout=30)
