"""bench.scoring: the engine's count of held-out games against their
records and GNU Go's dead stones."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from bench.scoring import main  # noqa: E402
from nets.evaluator import DEFAULT_OWNERSHIP  # noqa: E402
from tests.bench.test_ownership_labels import _walls_game  # noqa: E402


@pytest.mark.skipif(not DEFAULT_OWNERSHIP.is_file(), reason="no shipped ownership network")
@pytest.mark.parametrize("count", ["both", "to-move"])
def test_a_counted_game_is_scored_at_each_doubt(tmp_path, capsys, count) -> None:
    games = tmp_path / "games"
    games.mkdir()
    (games / "counted.sgf").write_text(_walls_game("W+15.5"))
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"source": "counted.sgf", "result": "W+15.5", "agrees": True,
                                  "dead": ["B3"], "score": -15.5,
                                  "owner": ("X" * 4 + "O" * 5) * 9}) + "\n")
    out = tmp_path / "scoring.json"
    assert main([str(labels), str(games), "--network", "none", "--doubts", "0,0.5",
                 "--rollouts", "1000", "--count", count, "--json", str(out)]) == 0
    table = capsys.readouterr().out
    assert "| own_doubt |" in table and "\n| 0.5 | 100.0% of 1 " in table
    searches = "one search of each colour to move" if count == "both" else \
        "one search of the side to move"
    assert f"{searches}, 1000 rollouts each" in table
    stats = json.loads(out.read_text())["stats"]
    assert stats["0.5"] == {"win_big": 1, "n_big": 1, "win_all": 1, "n_all": 1,
                            "dead_same": 1, "n_dead": 1}


@pytest.mark.skipif(not DEFAULT_OWNERSHIP.is_file(), reason="no shipped ownership network")
def test_games_counted_for_the_loser_are_listed(tmp_path, capsys) -> None:
    """A record whose result names the other winner than the board's
    count (the engine's area count, W+16.5) is counted wrong and listed in
    the JSON."""
    games = tmp_path / "games"
    games.mkdir()
    (games / "counted.sgf").write_text(_walls_game("B+15.5"))
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"source": "counted.sgf", "result": "B+15.5", "agrees": False,
                                  "dead": ["B3"], "score": -15.5, "rules": "japanese",
                                  "owner": ("X" * 4 + "O" * 5) * 9}) + "\n")
    out = tmp_path / "scoring.json"
    assert main([str(labels), str(games), "--network", "none", "--doubts", "0.5",
                 "--rollouts", "1000", "--json", str(out)]) == 0
    assert "\n| 0.5 | 0.0% of 1 " in capsys.readouterr().out
    assert json.loads(out.read_text())["wrong"] == {"0.5": [
        {"game": str(games / "counted.sgf"), "result": "B+15.5", "count": "W+16.5",
         "rules": "japanese"}]}


@pytest.mark.skipif(not DEFAULT_OWNERSHIP.is_file(), reason="no shipped ownership network")
def test_dead_stone_lists_unlike_gnugos_are_listed(tmp_path, capsys) -> None:
    """A label whose GNU Go count is the record's but whose dead-stone list
    leaves out the stone the engine calls dead (B3) is a disagreement: the
    JSON names the game and the stones on each side."""
    games = tmp_path / "games"
    games.mkdir()
    (games / "counted.sgf").write_text(_walls_game("W+15.5"))
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"source": "counted.sgf", "result": "W+15.5", "agrees": True,
                                  "dead": ["J9"], "score": -15.5,
                                  "owner": ("X" * 4 + "O" * 5) * 9}) + "\n")
    out = tmp_path / "scoring.json"
    assert main([str(labels), str(games), "--network", "none", "--doubts", "0.5",
                 "--rollouts", "1000", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["stats"]["0.5"]["dead_same"] == 0
    assert result["dead_differs"] == {"0.5": [
        {"game": str(games / "counted.sgf"), "result": "W+15.5", "engine_only": ["B3"],
         "gnugo_only": ["J9"]}]}


def test_errors_exit_2(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main([str(tmp_path / "none.jsonl"), str(tmp_path)])
    assert e.value.code == 2 and "none.jsonl does not exist" in capsys.readouterr().err
    (tmp_path / "l.jsonl").write_text("")
    with pytest.raises(SystemExit) as e:
        main([str(tmp_path / "l.jsonl"), str(tmp_path), "--doubts", "0,x"])
    assert e.value.code == 2 and "comma-separated" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main([str(tmp_path / "l.jsonl")])
    assert e.value.code == 2 and "in pairs" in capsys.readouterr().err
