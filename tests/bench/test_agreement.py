"""bench.agreement: positions drawn from held-out games, an engine's
reg_genmove at each against the professional's move (a stand-in engine that
knows the game's even-numbered moves), the paired test between engines, and
the errors that exit 2."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from bench import agreement

GAME = "(;GM[1]FF[4]SZ[19]KM[6.5];B[pd];W[dp];B[pq];W[dd];B[qk];W[];B[jj])"
MOVES = ["Q16", "D4", "Q3", "D16", "R9", None, "K10"]      # as GTP vertices


def fake_engine(tmp_path: Path, name: str, wrong: str = "A1", die_at: int = -1,
                regress: bool = True) -> str:
    """A GTP engine whose move after k plays is GAME's move k+1 when k is
    even, ``wrong`` otherwise; it exits at its ``die_at``-th move.  With
    ``regress`` it answers reg_genmove; without, only genmove (which plays
    the move) and undo, and it refuses any command but undo after a move
    it played."""
    prog = tmp_path / name
    prog.write_text(f"""#!{sys.executable}
import sys
moves, played, asked, regress, pending = {MOVES!r}, 0, 0, {regress!r}, False
for line in sys.stdin:
    parts = line.split()
    if not parts:
        continue
    cmd = parts[0]
    if pending and cmd != "undo":
        print("? the move played is still on the board\\n", flush=True)
        continue
    if cmd == "known_command":
        print("= " + ("true" if regress or parts[1] != "reg_genmove" else "false") + "\\n",
              flush=True)
        continue
    if cmd == "clear_board":
        played = 0
    elif cmd == "play":
        played += 1
    elif cmd == "undo":
        played -= 1
        pending = False
    elif cmd == ("reg_genmove" if regress else "genmove"):
        asked += 1
        if asked == {die_at}:
            sys.exit(3)
        answer = moves[played] if played % 2 == 0 else {wrong!r}
        if not regress and answer != "resign":
            played += 1
            pending = True
        print("= " + answer.lower() + "\\n", flush=True)
        continue
    elif cmd not in ("boardsize", "komi", "quit"):
        print("? unknown command\\n", flush=True)
        continue
    elif cmd == "quit":
        print("=\\n", flush=True)
        break
    print("=\\n", flush=True)
""")
    prog.chmod(prog.stat().st_mode | stat.S_IEXEC)
    return str(prog)


@pytest.fixture
def games(tmp_path: Path) -> Path:
    folder = tmp_path / "games" / "sub"
    folder.mkdir(parents=True)
    (folder / "a.sgf").write_text(GAME)
    (folder / "handicap.sgf").write_text("(;GM[1]SZ[19]HA[2]AB[dd][pp];W[dp])")
    (folder / "nine.sgf").write_text("(;GM[1]SZ[9];B[ee])")
    (folder / "broken.sgf").write_text("(;GM[1]SZ[19];B[")
    return tmp_path / "games"


def test_hits_by_phase_and_against_the_first(tmp_path, games, capsys) -> None:
    right = fake_engine(tmp_path, "right")          # gets moves 1, 3, 5 and 7
    resigns = fake_engine(tmp_path, "resigns", wrong="resign", regress=False)
    out = tmp_path / "a.json"
    assert agreement.main([str(games), "--positions", "6", "--engine", right,
                           "--engine", resigns, "--json", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"# 6 positions of {games}, moves 1-400, seed 1"
    rows = lines[-7:-5]
    assert rows == [
        f"| `{right}` | 4/6 | 66.7% (30.0-90.3) | 4/6 | 0/0 | 0/0 | {rows[0].split('|')[7].strip()} |  |",
        f"| `{resigns}` | 4/6 | 66.7% (30.0-90.3) | 4/6 | 0/0 | 0/0 | {rows[1].split('|')[7].strip()} "
        "| 0 / 0, 1.000 |",
    ]
    # both chose the professional's move at moves 1, 3, 5 and 7, and
    # differently (A1 against resign) at the other two
    assert lines[-5:] == ["", "| same move as engine | 1 | 2 |", "|---|---|---|",
                          "| 1 |  | 4/6 |", "| 2 | 4/6 |  |"]
    data = json.loads(out.read_text())
    assert sorted(p["move_number"] for p in data["positions"]) == [1, 2, 3, 4, 5, 7]
    assert all(p["game"].endswith("a.sgf") and p["komi"] == 6.5 for p in data["positions"])
    for p, a in zip(data["positions"], data["engines"][1]["answers"]):
        assert a["move"] == (p["answer"] if p["move_number"] % 2 else "RESIGN")
        assert a["hit"] == (p["move_number"] % 2 == 1)


def test_a_seeded_sample_inside_the_move_range(tmp_path, games, capsys) -> None:
    right = fake_engine(tmp_path, "right")
    out = tmp_path / "a.json"
    assert agreement.main([str(games), "--positions", "2", "--moves", "3-4", "--seed", "5",
                           "--engine", right, "--json", str(out)]) == 0
    first = json.loads(out.read_text())["positions"]
    assert sorted(p["move_number"] for p in first) == [3, 4]
    assert agreement.main([str(games), "--positions", "2", "--moves", "3-4", "--seed", "5",
                           "--engine", right, "--json", str(out)]) == 0
    assert json.loads(out.read_text())["positions"] == first


def test_runs_split_over_cores_merge_into_one_report(tmp_path, games, capsys) -> None:
    """Two runs on the same positions read as one: every engine paired with
    the first of the first run, and each pair's same moves."""
    right = fake_engine(tmp_path, "right")
    wrong = fake_engine(tmp_path, "wrong", wrong="B2")
    other = fake_engine(tmp_path, "other", wrong="C3")
    a, b, merged = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "ab.json"
    assert agreement.main([str(games), "--positions", "6", "--engine", right,
                           "--json", str(a)]) == 0
    assert agreement.main([str(games), "--positions", "6", "--engine", wrong,
                           "--engine", other, "--json", str(b)]) == 0
    capsys.readouterr()
    assert agreement.main(["--merge", str(a), str(b), "--json", str(merged)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"# 6 positions of {games}, moves 1-400, seed 1: 2 runs merged"
    assert [row.split("|")[1].strip() for row in lines[3:6]] == [f"`{e}`" for e in
                                                                 (right, wrong, other)]
    assert [row.split("|")[-2].strip() for row in lines[3:6]] == ["", "0 / 0, 1.000",
                                                                  "0 / 0, 1.000"]
    assert lines[-4:] == ["|---|---|---|---|", "| 1 |  | 4/6 | 4/6 |",
                          "| 2 | 4/6 |  | 4/6 |", "| 3 | 4/6 | 4/6 |  |"]
    data = json.loads(merged.read_text())
    assert [e["engine"] for e in data["engines"]] == [right, wrong, other]
    assert data["positions"] == json.loads(a.read_text())["positions"]


def test_merging_runs_of_other_positions_or_other_files_exits_2(tmp_path, games,
                                                                capsys) -> None:
    right = fake_engine(tmp_path, "right")
    a, b, junk = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "junk.json"
    assert agreement.main([str(games), "--positions", "6", "--engine", right,
                           "--json", str(a)]) == 0
    assert agreement.main([str(games), "--positions", "5", "--engine", right,
                           "--json", str(b)]) == 0
    junk.write_text('{"engines": []}')
    capsys.readouterr()
    for argv, message in [
            (["--merge", str(a), str(b)], f"--merge {b}: other positions than {a}'s "
             "(the same data, --positions, --seed and --moves draw the same)"),
            (["--merge", str(a), str(junk)], f"--merge {junk}: not a --json file of "
             "bench.agreement"),
            (["--merge", str(a), "--engine", right],
             "give either --engine (one or more) or --merge"),
            ([str(games)], "give either --engine (one or more) or --merge")]:
        assert agreement.main(argv) == 2
        assert capsys.readouterr().err == f"python -m bench.agreement: error: {message}\n"
    assert agreement.main(["--merge", str(tmp_path / "none.json")]) == 2
    assert f"--merge {tmp_path / 'none.json'}: cannot read it" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--positions", "7"], "only 6 positions in --moves 1-400; --positions 7 asks for more"),
    (["--moves", "5"], "--moves '5': expected FIRST-LAST, as 1-400"),
    (["--moves", "4-2"], "--moves '4-2': expected FIRST-LAST with 1 <= FIRST <= LAST"),
    (["--positions", "0"], "--positions must be at least 1"),
])
def test_bad_options_exit_2(tmp_path, games, capsys, args, message) -> None:
    right = fake_engine(tmp_path, "right")
    assert agreement.main([str(games), "--engine", right] + args) == 2
    assert capsys.readouterr().err == f"python -m bench.agreement: error: {message}\n"


def test_missing_folder_and_failing_engines_exit_2(tmp_path, games, capsys) -> None:
    right = fake_engine(tmp_path, "right")
    assert agreement.main([str(tmp_path / "none"), "--engine", right]) == 2
    assert f"{tmp_path / 'none'}: no such folder" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert agreement.main([str(empty), "--engine", right]) == 2
    assert "no 19x19 game without handicap" in capsys.readouterr().err
    assert agreement.main([str(games), "--positions", "3", "--engine",
                           str(tmp_path / "no-such-engine")]) == 2
    assert "cannot be started" in capsys.readouterr().err
    dies = fake_engine(tmp_path, "dies", die_at=2)
    assert agreement.main([str(games), "--positions", "3", "--engine", dies]) == 2
    err = capsys.readouterr().err
    assert f"engine {dies!r}: 'reg_genmove" in err
