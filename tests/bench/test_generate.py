"""bench.generate: the 9x9 game generator keeps refereed games, resumes,
and refuses bad arguments."""

from __future__ import annotations

import pytest
from sgfmill import sgf

from bench import generate

FAST = ["--rollouts", "20", "--network", "none", "--ownership", "none", "--gnugo-every", "0"]


def test_generates_resumes_and_names_its_commands(tmp_path, capsys):
    out = tmp_path / "games"
    assert generate.main([str(out), "--games", "2", *FAST]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["gen-000001.sgf", "gen-000002.sgf"]     # no scratch left behind
    game = sgf.Sgf_game.from_bytes((out / "gen-000002.sgf").read_bytes())
    root = game.get_root()
    assert game.get_size() == 9 and root.get("KM") == 7.5
    comment = root.get("C")
    assert comment.startswith("bench.generate game 2 (self): the engine plays Black.")
    assert "--seed 1000007" in comment and "--seed 1000008" in comment   # own seed per side
    assert len(game.get_main_sequence()) > 20
    first = (out / "gen-000001.sgf").read_bytes()
    capsys.readouterr()
    # resumed: the two games are kept as they are, only the third is played
    assert generate.main([str(out), "--games", "3", *FAST]) == 0
    assert (out / "gen-000001.sgf").read_bytes() == first
    assert (out / "gen-000003.sgf").exists()
    err = capsys.readouterr().err
    assert "2 of 3 games already" in err and "[game 3]" in err and "[game 1]" not in err


@pytest.mark.parametrize("args", [["--games", "0"], ["--games", "2", "--size", "1"],
                                  ["--games", "2", "--rollouts", "0"],
                                  ["--games", "2", "--gnugo", "/no/such/gnugo"]])
def test_bad_arguments_exit_2(tmp_path, args, capsys):
    with pytest.raises(SystemExit) as e:
        generate.main([str(tmp_path / "g"), *args])
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err
