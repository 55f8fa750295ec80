"""Quick checks of bench.match: stub GTP engines that play, crash, hang,
answer garbage or illegal moves, and one short real game against GNU Go."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from bench import match
from engine.board import Board

STUB = textwrap.dedent('''
    """Stub GTP engine: python stub.py MODE [K] [SEED].

    Plays random moves on points that have an empty neighbour (so it never
    captures and never commits suicide: every move is legal while both sides
    are stubs), passes after K of its own moves.  MODE changes what happens
    at its K-th genmove: random (pass from then on), crash (exit), garbage
    (a vertex off the board), hang (sleep), slow (1.5 s), illegal (an occupied point),
    resign; refuse answers every play with '?'; badname dies at once; claim
    lists the opponent's first stone as dead; skew (as Pachi) and skewfree
    answer fixed_handicap 3 with D4 Q16 Q4, and only skew takes
    set_free_handicap; hangonce hangs as hang does, but only the first time
    (it leaves a file "hung" beside this script).
    """
    import os, random, sys, time

    mode = sys.argv[1]
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    if mode == "badname":
        sys.exit(7)
    LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
    size, stones, mine, me = 19, {}, 0, None

    def vertex(c, r):
        return LETTERS[c] + str(r + 1)

    def parse(v):
        return LETTERS.index(v[0].upper()), int(v[1:]) - 1

    def out(text, ok=True):
        sys.stdout.write(("= " if ok else "? ") + text + "\\n\\n")
        sys.stdout.flush()

    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        name, args = cmd[0], cmd[1:]
        if name == "quit":
            out("")
            break
        elif name == "name":
            out("stub-" + mode)
        elif name == "version":
            out("1")
        elif name == "boardsize":
            size = int(args[0])
            stones = {}
            out("")
        elif name == "clear_board":
            stones = {}
            out("")
        elif name == "komi":
            out("")
        elif name == "fixed_handicap" and mode.startswith("skew"):
            for v in ("D4", "Q16", "Q4"):
                stones[parse(v)] = "b"
            out("D4 Q16 Q4")
        elif name == "set_free_handicap" and mode == "skew":
            for v in args:
                stones[parse(v)] = "b"
            out("")
        elif name == "play":
            if mode == "refuse":
                out("illegal move", ok=False)
                continue
            if args[1].lower() != "pass":
                stones[parse(args[1])] = args[0]
            out("")
        elif name == "genmove":
            mine += 1
            me = args[0].lower()
            if mine == k and mode == "crash":
                sys.exit(3)
            if mine == k and mode == "garbage":
                out("ZZ99")
                continue
            if mine == k and mode == "hang":
                time.sleep(60)
            hung = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hung")
            if mine == k and mode == "hangonce" and not os.path.exists(hung):
                open(hung, "w").close()
                time.sleep(60)
            if mine == k and mode == "slow":
                time.sleep(1.5)
            if mine == k and mode == "resign":
                out("resign")
                continue
            if mine == k and mode == "illegal" and stones:
                out(vertex(*next(iter(stones))))
                continue
            free = [(c, r) for c in range(size) for r in range(size)
                    if (c, r) not in stones and any(
                        0 <= c + dc < size and 0 <= r + dr < size
                        and (c + dc, r + dr) not in stones
                        for dc, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)))]
            if mine >= k or not free:
                out("pass")
                continue
            p = rng.choice(free)
            stones[p] = args[0]
            out(vertex(*p))
        elif name == "final_status_list":
            theirs = [p for p, c in stones.items() if c.lower() != me]
            out(vertex(*theirs[0]) if mode == "claim" and theirs else "")
        elif name == "known_command":
            out("false")
        elif name in ("time_settings", "time_left"):
            out("")
        else:
            out("unknown command", ok=False)
''')


@pytest.fixture
def stub(tmp_path):
    path = tmp_path / "stub.py"
    path.write_text(STUB)

    def argv(*args) -> list[str]:
        return [sys.executable, str(path), *map(str, args)]
    return argv


def config(tmp_path, engine, opponent, games=2, size=7, **kw) -> match.MatchConfig:
    return match.MatchConfig(engine=engine, opponent=opponent, size=size, komi=7.5,
                             max_moves=kw.pop("max_moves", 3 * size * size),
                             timeout=kw.pop("timeout", 10.0), startup_timeout=10.0,
                             sgf_dir=tmp_path / "sgf", games=games, **kw)


def run(cfg, parallel=1):
    return match.run_match(cfg, parallel=parallel, log=sys.stderr)


def test_stub_vs_stub_plays_to_two_passes(tmp_path, stub):
    cfg = config(tmp_path, stub("random", 6, 1), stub("random", 6, 2), games=2)
    records = run(cfg)
    assert [r["game"] for r in records] == [1, 2]
    assert [r["engine_color"] for r in records] == ["B", "W"]
    for r in records:
        assert r["error"] is None
        assert r["end"] == "two passes"
        assert r["moves"] == 12          # 5 moves each (the 6th genmove passes), two passes
        assert r["referee"].startswith("engine")   # no GNU Go: our side referees
        assert r["dead_from"] == "engine"
        # the count: komi decides between two stubs' scattered stones
        assert r["result"] == match.format_result(r["area"]["black"] - r["area"]["white"] - 7.5)
        assert os.path.exists(r["sgf"])
    black0 = records[0]["black"]
    assert black0 == "stub-random 1"
    text = open(records[0]["sgf"]).read()
    for prop in ("PB[stub-random 1]", "PW[stub-random 1]", "KM[7.5]", "RE[", "C["):
        assert prop in text
    assert "both players passed" in text


def test_disputed_dead_stones_are_played_out(tmp_path, stub, capsys):
    """The opponent calls one of the engine's stones dead, the engine does
    not: the game goes on (genmove: the stubs know no cleanup command)
    until two passes, the lists still differ, and no stone counts dead."""
    cfg = config(tmp_path, stub("random", 4, 1), stub("claim", 4, 2), games=2)
    records = run(cfg)
    for r in records:
        assert r["end"] == "two passes" and r["error"] is None
        play_out = r["play_out"]
        assert play_out["dead_stones"]["engine"] == [] and len(play_out["dead_stones"]["opponent"]) == 1
        assert play_out["moves"] == 2 and play_out["still_disputed"]
        assert play_out["commands"] == {"engine": "genmove", "opponent": "genmove"}
        assert r["moves"] == 10
        assert r["result"] == match.format_result(r["area"]["black"] - r["area"]["white"] - 7.5)
        assert "played out" in match.progress_line(r, 2)
    summary = match.summarise(records)
    assert summary["played_out"] == 2
    match.print_summary(summary, cfg)
    assert "game was played out in 2" in capsys.readouterr().out


def test_crash_mid_game_is_a_forfeit(tmp_path, stub):
    cfg = config(tmp_path, stub("random", 8), stub("crash", 3), games=2)
    records = run(cfg)
    for r in records:
        assert r["end"] == "forfeit"
        assert r["error"]["side"] == "opponent" and r["error"]["kind"] == "crash"
        assert r["engine_won"] is True
        assert r["result"] == ("B+F" if r["engine_color"] == "B" else "W+F")
        assert "forfeits" in open(r["sgf"]).read()
    s = match.summarise(records)
    assert s["wins"] == 2 and s["errors_by_side"] == {"engine": 0, "opponent": 2}


def test_garbage_illegal_resign_and_refusal(tmp_path, stub):
    cases = [("garbage", "garbage"), ("illegal", "illegal"), ("refuse", "refused")]
    for mode, kind in cases:
        cfg = config(tmp_path / mode, stub(mode, 3), stub("random", 8), games=1)
        (r,) = run(cfg)
        assert r["error"]["side"] == "engine", mode
        assert r["error"]["kind"] == kind, (mode, r["error"])
        assert r["engine_won"] is False
    cfg = config(tmp_path / "resign", stub("random", 8), stub("resign", 2), games=1)
    (r,) = run(cfg)
    assert r["end"] == "resignation" and r["result"] == "B+R" and r["error"] is None


def test_hang_and_missing_program(tmp_path, stub):
    cfg = config(tmp_path / "hang", stub("random", 8), stub("hang", 2), games=1, timeout=1.0)
    (r,) = run(cfg)
    assert r["error"]["kind"] == "timeout" and r["engine_won"] is True
    cfg = config(tmp_path / "missing", [str(tmp_path / "no-such-engine")], stub("random"), games=1)
    (r,) = run(cfg)
    assert r["error"] == {"side": "engine", "kind": "crash", "message": r["error"]["message"]}
    assert r["engine_won"] is False
    cfg = config(tmp_path / "dies", stub("random"), stub("badname"), games=1)
    (r,) = run(cfg)
    assert r["error"]["side"] == "opponent" and r["error"]["kind"] == "crash"


def test_cli_parallel_summary_and_json(tmp_path, stub, capsys):
    out = tmp_path / "m.json"
    argv = ["--games", "4", "--size", "5", "--parallel", "2", "--sgf-dir", str(tmp_path / "s"),
            "--engine", " ".join(stub("random", 4, 3)),
            "--opponent", " ".join(stub("crash", 2)), "--json", str(out)]
    assert match.main(argv) == 0
    text = capsys.readouterr().out
    assert "engine wins 4, losses 0, draws 0" in text
    assert "errors: 4 (engine 0, opponent 4)" in text
    assert "seconds per move (genmove to answer): engine " in text
    data = json.loads(out.read_text())
    assert data["summary"]["games"] == 4
    assert [g["game"] for g in data["games"]] == [1, 2, 3, 4]
    assert len(list((tmp_path / "s").glob("*.sgf"))) == 4


def test_area_count_and_wilson():
    board = Board.from_ascii("""
        O . X O .
        . . X O .
        X X X O .
        O O O O .
        . . . . .
    """)
    # stones count for their colour; the top-left corner touches both colours
    assert match.area_count(board, set()) == (5, 8 + 9)
    # with the white corner stone dead the corner is black's
    assert match.area_count(board, {(0, 4)}) == (5 + 4, 7 + 9)
    assert match.format_result(2.5) == "B+2.5" and match.format_result(-1) == "W+1"
    assert match.parse_score("W+3.5") == -3.5 and match.parse_score("junk") is None
    lo, hi = match.wilson(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-3) and hi == pytest.approx(0.7634, abs=1e-3)
    assert match.wilson(0, 4)[0] == 0.0


def find_gnugo() -> str | None:
    path = shutil.which("gnugo")
    if path:
        return path
    return "/usr/games/gnugo" if os.access("/usr/games/gnugo", os.X_OK) else None


@pytest.mark.gnugo
def test_real_game_against_gnugo(tmp_path):
    gnugo = find_gnugo()
    if gnugo is None:
        pytest.skip("GNU Go not installed")
    # --network none: one search thread with a seed plays the same game every
    # time (the network's priors arrive when they arrive)
    cfg = config(tmp_path, [sys.executable, "-m", "engine.gtp", "--rollouts", "50", "--quiet",
                            "--seed", "3", "--resign", "0", "--network", "none"],
                 [gnugo, "--mode", "gtp", "--level", "1", "--chinese-rules", "--never-resign"],
                 games=1, size=7, max_moves=60, timeout=30.0)
    cfg.startup_timeout = 120.0
    (r,) = run(cfg)
    assert r["error"] is None, r
    assert r["black"].startswith("delayed-go") and r["white"] == "GNU Go 3.8"
    # neither side resigns (--resign 0; GNU Go --never-resign: it resigned
    # after 23 moves once), so the game is scored
    assert r["end"] in ("two passes", "max moves")
    assert r["referee"] == "opponent (GNU Go)"
    assert r["dead_from"] == "opponent"
    assert match.parse_score(r["referee_final_score"]) is not None
    assert r["score_agrees"] is not None
    assert r["result"] in open(r["sgf"]).read()


def test_a_bug_in_the_referee_voids_one_game_only(tmp_path, stub, monkeypatch):
    real = match.play_game

    def flaky(index, cfg):
        if index == 1:
            raise RuntimeError("boom")
        return real(index, cfg)
    monkeypatch.setattr(match, "play_game", flaky)
    cfg = config(tmp_path, stub("random", 4), stub("resign", 1), games=3)
    records = run(cfg)
    assert [r["end"] for r in records] == ["resignation", "referee error", "resignation"]
    s = match.summarise(records)
    assert (s["games"], s["void"], s["wins"], s["losses"]) == (2, 1, 2, 0)
    assert s["as_black"] == {"games": 2, "wins": 2} and s["as_white"] == {"games": 0, "wins": 0}
    assert s["errors"][0]["side"] == "referee"


def test_clocks_charge_moves_by_kgs_rules():
    byo = match.GameClock(match.ClockSpec.parse("byoyomi 10 2 3"))
    assert byo.time_left() == (10, 0)
    assert byo.spend(9.0) and byo.time_left() == (1, 0)
    assert byo.spend(2.5) and byo.in_byoyomi and byo.periods == 3   # 1.5 s into a 2 s period
    assert byo.time_left() == (2, 1)
    assert byo.spend(4.5) and byo.periods == 1                       # two periods overrun
    assert not byo.spend(2.1)                                        # the last one too
    can = match.GameClock(match.ClockSpec.parse("canadian 5 10 2"))
    assert can.spend(6.0) and can.time_left() == (9, 1)              # 1 s of the period used
    assert can.spend(8.5) and can.time_left() == (10, 2)             # period done: a new one
    assert can.spend(9.0) and not can.spend(1.5)
    absolute = match.GameClock(match.ClockSpec.parse("absolute 3"))
    assert absolute.spend(2.0) and not absolute.spend(1.5)
    for bad in ("byoyomi 30 5", "fischer 30 5", "canadian 30 0 5", "absolute -1", "byoyomi a b c"):
        with pytest.raises(ValueError):
            match.ClockSpec.parse(bad)
    assert match.ClockSpec.parse("byoyomi 30 5 3").kgs() == "kgs-time_settings byoyomi 30 5 3"
    assert match.ClockSpec.parse("byoyomi 30 5 3").gtp() == "time_settings 30 5 1"
    assert match.ClockSpec.parse("canadian 30 25 5").gtp() == "time_settings 30 25 5"


def test_a_program_over_its_clock_loses_on_time(tmp_path, stub):
    cfg = config(tmp_path, stub("slow", 3, 1), stub("random", 30, 2), games=1,
                 clock=match.ClockSpec.parse("byoyomi 0 1 1"))
    (r,) = run(cfg)
    assert r["end"] == "time" and r["result"] == "W+T" and r["engine_won"] is False
    assert r["moves"] == 4 and r["clocks"]["engine"]["longest_move"] >= 1.5
    s = match.summarise([r])
    assert s["lost_on_time"] == {"engine": 1, "opponent": 0}
    # every genmove is timed, the one that overran too: the slow side's mean shows it
    assert r["thinking"]["engine"]["moves"] == 3 and r["thinking"]["opponent"]["moves"] == 2
    assert s["seconds_per_move"]["engine"] >= 0.5 > s["seconds_per_move"]["opponent"]


def test_a_pause_of_the_match_is_neither_sides_thinking(tmp_path, stub, monkeypatch):
    """A match stopped with kill -STOP while a program thinks: the client
    tells how long its wait was stopped, and the match leaves that out of
    the seconds a move (here every genmove's wait is said to hold a 0.3 s
    pause, which the stubs' answers of a few milliseconds then fall short of)."""
    from gtp import GtpClient

    class PausedAtEveryGenmove(GtpClient):
        def send(self, command, timeout=None):
            answer = super().send(command, timeout)
            if command.startswith("genmove"):
                time.sleep(0.3)
                self.paused = 0.3
            return answer

    monkeypatch.setattr(match, "GtpClient", PausedAtEveryGenmove)
    (r,) = run(config(tmp_path, stub("random", 4, 1), stub("random", 4, 2), games=1))
    for role in ("engine", "opponent"):
        assert r["thinking"][role]["moves"] >= 4
        assert r["thinking"][role]["seconds"] < 0.1 * r["thinking"][role]["moves"]
    assert r["seconds"] > 0.3 * r["moves"]            # the game's wall time keeps them


def test_setup_commands_follow_komi(tmp_path, stub):
    """--opponent-setup commands reach the opponent in every game; one it
    refuses forfeits the game, recorded as such."""
    ok = run(config(tmp_path, stub("random", 4, 3), stub("random", 4, 5), games=2,
                    setup={"opponent": ["time_settings 0 1 0"]}))
    assert all(r.get("error") is None for r in ok)
    bad = run(config(tmp_path, stub("random", 4, 3), stub("random", 4, 5), games=2,
                     setup={"opponent": ["go_rules chinese"]}))
    assert all(r["error"]["side"] == "opponent" and r["error"]["kind"] == "refused"
               for r in bad)
    assert all("go_rules chinese" in r["error"]["message"] for r in bad)


@pytest.mark.gnugo
def test_a_handicap_game_against_gnugo(tmp_path):
    """--handicap 2 --engine-color white: both programs place the stones at
    GTP's fixed points, White moves first, the record keeps the stones."""
    gnugo = find_gnugo()
    if gnugo is None:
        pytest.skip("GNU Go not installed")
    cfg = config(tmp_path, [sys.executable, "-m", "engine.gtp", "--rollouts", "50", "--quiet",
                            "--seed", "3"],
                 [gnugo, "--mode", "gtp", "--level", "1", "--chinese-rules"],
                 games=2, size=9, max_moves=20, timeout=30.0, handicap=2, engine_color="white")
    cfg.startup_timeout = 120.0
    records = run(cfg)
    for r in records:
        assert r["error"] is None, r
        assert r["engine_color"] == "W" and r["white"].startswith("delayed-go")
        assert sorted(r["setup"]) == ["C3", "G7"]
        assert r["record"][0].startswith("W ")
        text = open(r["sgf"]).read()
        assert "HA[2]" in text and "AB[cg][gc]" in text
    s = match.summarise(records)
    assert s["as_white"]["games"] == 2 and s["as_black"]["games"] == 0


def test_a_program_that_refuses_the_handicap_forfeits(tmp_path, stub):
    cfg = config(tmp_path, stub("random", 6, 1), stub("random", 6, 2), games=1, size=9,
                 handicap=2)
    (r,) = run(cfg)
    assert r["end"] == "forfeit" and r["error"]["side"] == "engine"


def test_a_handicap_placed_elsewhere_goes_to_gtps_places(tmp_path, stub):
    """Pachi answers fixed_handicap 3 with D4 Q16 Q4, not GTP's D4 Q16 D16:
    its board is cleared and given GTP's places with set_free_handicap, and
    the record says so; a program that refuses set_free_handicap too
    forfeits, with both placements named."""
    cfg = config(tmp_path, stub("skew", 3, 1), stub("skew", 3, 2), games=1, size=19,
                 max_moves=6, handicap=3, engine_color="black")
    (r,) = run(cfg)
    assert r["error"] is None, r
    assert sorted(r["setup"]) == ["D16", "D4", "Q16"]
    assert r["record"][0].startswith("W ")
    assert [n for n in r["notes"] if "fixed_handicap" in n] == [
        f"{side}: fixed_handicap 3 placed the stones at D4 Q16 Q4, not GTP's fixed places; "
        "set_free_handicap D4 Q16 D16 instead" for side in ("engine", "opponent")]
    cfg = config(tmp_path, stub("skew", 3, 1), stub("skewfree", 3, 2), games=1, size=19,
                 max_moves=6, handicap=3, engine_color="black")
    cfg.sgf_dir = tmp_path / "refused"
    (r,) = run(cfg)
    assert r["end"] == "forfeit" and r["error"]["side"] == "opponent"
    assert r["error"]["message"] == ("fixed_handicap 3 placed the stones at D4 Q16 Q4, not "
                                     "GTP's fixed places (D4 Q16 D16), and set_free_handicap "
                                     "D4 Q16 D16 failed")


def test_resume_plays_only_the_games_not_yet_played(tmp_path, stub, capsys):
    """A match stopped part way goes on with --resume: the games played
    are kept (their records beside the SGF files), only the rest are
    played, and the summary counts them all; other settings are refused,
    and a new match does not write into the folder."""
    folder = tmp_path / "s"
    common = ["--size", "5", "--sgf-dir", str(folder),
              "--engine", " ".join(stub("random", 4, 3)), "--opponent", " ".join(stub("crash", 2))]
    assert match.main(["--games", "2", *common]) == 0
    capsys.readouterr()
    first = (folder / "game-001.json").read_text()
    out = tmp_path / "m.json"
    assert match.main(["--games", "4", "--resume", "--json", str(out), *common]) == 0
    captured = capsys.readouterr()
    assert "resuming: 2 of 4 games already played" in captured.err
    assert "[game 1/" not in captured.err and "[game 3/4]" in captured.err
    assert "engine wins 4, losses 0, draws 0" in captured.out
    assert [g["game"] for g in json.loads(out.read_text())["games"]] == [1, 2, 3, 4]
    assert (folder / "game-001.json").read_text() == first
    with pytest.raises(SystemExit) as e:
        match.main(["--games", "4", "--resume", "--komi", "0.5", *common])
    assert e.value.code == 2
    assert "komi differ" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        match.main(["--games", "4", *common])
    assert e.value.code == 2
    assert "already holds a match" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        match.main(["--games", "4", "--resume", "--engine", "x"])


def test_a_stopped_match_goes_on_from_the_move_it_stood_at(tmp_path, stub):
    """SIGTERM stops a match at once: the game in play is not recorded (no
    forfeit), its moves stay in game-NNN.partial.json, and --resume goes on
    from them with both programs started afresh and given the moves."""
    folder = tmp_path / "s"
    common = ["--games", "1", "--size", "7", "--sgf-dir", str(folder), "--timeout", "30",
              "--engine", " ".join(stub("hangonce", 5, 3)),
              "--opponent", " ".join(stub("random", 6, 4))]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.Popen([sys.executable, "-m", "bench.match", *common], cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    partial = folder / "game-001.partial.json"
    deadline = time.monotonic() + 60
    while not (tmp_path / "hung").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (tmp_path / "hung").exists()       # the engine's 5th move hangs: 8 moves played
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "match stopped: 0 of 1 games played" in err
    assert not (folder / "game-001.json").exists()
    assert not list(folder.glob("*.sgf"))
    state = json.loads(partial.read_text())
    assert len(state["moves"]) == 8
    assert [m[0] for m in state["moves"]] == list("BWBWBWBW")
    assert match.main([*common, "--resume"]) == 0
    rec = json.loads((folder / "game-001.json").read_text())
    assert rec["record"][:8] == state["moves"]
    assert rec["resumed_after"] == [8]
    assert "resumed after move 8: both programs started afresh" in " ".join(rec["notes"])
    assert rec["end"] == "two passes" and rec["error"] is None and rec["moves"] > 8
    assert rec["thinking"]["engine"]["moves"] == (rec["moves"] + 1) // 2
    assert not partial.exists()


def test_a_partial_game_that_cannot_be_used_starts_over(tmp_path, stub):
    """A saved game whose moves are not a legal game is set aside (noted);
    one that ends in two passes is scored at once."""
    cfg = config(tmp_path, stub("random", 4, 3), stub("random", 4, 4), games=2, resumable=True)
    cfg.sgf_dir.mkdir()
    blank = {"thinking": {"engine": [1.0, 1], "opponent": [1.0, 1]}, "seconds": 5.0,
             "resumed_at": [], "clocks": {}}
    (cfg.sgf_dir / "game-001.partial.json").write_text(
        json.dumps({**blank, "moves": ["B D4", "W D4"]}))
    (cfg.sgf_dir / "game-002.partial.json").write_text(
        json.dumps({**blank, "moves": ["B D4", "W pass", "B pass"]}))
    first, second = run(cfg)
    assert "game-001.partial.json could not be used (move 2 (W D4) is illegal: occupied); " \
           "the game started over" in first["notes"]
    assert "resumed_after" not in first and first["record"][:2] != ["B D4", "W D4"]
    assert second["resumed_after"] == [3] and second["moves"] == 3
    assert second["end"] == "two passes" and second["seconds"] >= 5.0
    assert second["record"] == ["B D4", "W pass", "B pass"]
    assert not list(cfg.sgf_dir.glob("*.partial.json"))
