"""The engine with its shipped network, through GTP: --policy-only, --rank,
--network, the network's heat map, and the default engine (search with
delayed priors)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.gtp import build_registry, load_network, parse_options
from engine.player import Player
from gtp import parse

ROOT = Path(__file__).resolve().parent.parent.parent


class Engine:
    def __init__(self, *args: str):
        config, options = parse_options(["--quiet", "--seed", "1", *args])
        network, start_worker = load_network(options)
        self.player = Player(config, network, start_worker)
        self.registry = build_registry(self.player, options)

    def ok(self, line: str) -> str:
        resp = self.registry.execute(parse(line))
        assert resp.ok, f"{line!r} failed: ? {resp.text}"
        return resp.text.strip("\n")

    def fail(self, line: str) -> str:
        resp = self.registry.execute(parse(line))
        assert not resp.ok, f"{line!r} succeeded: = {resp.text}"
        return resp.text

    def close(self) -> None:
        self.player.close()


@pytest.fixture
def engine():
    made = []

    def make(*args):
        e = Engine(*args)
        made.append(e)
        return e
    yield make
    for e in made:
        e.close()


FOUR_FOUR_AND_THREE_FOUR = {"D4", "D16", "Q4", "Q16", "C4", "D3", "C16", "D17", "Q3",
                            "R4", "Q17", "R16"}


def test_policy_only_opens_in_a_corner_and_answers_legally(engine):
    e = engine("--policy-only")
    assert e.ok("boardsize 19") == "" and e.ok("clear_board") == ""
    first = e.ok("genmove b")
    assert first in FOUR_FOUR_AND_THREE_FOUR
    second = e.ok("genmove w")
    assert second in FOUR_FOUR_AND_THREE_FOUR and second != first
    e.ok("play b K10")
    third = e.ok("genmove w")
    assert third not in (first, second, "K10", "pass", "resign")
    assert "policy network res6v alone" in e.ok("gomill-describe_engine")


def test_policy_only_plays_on_9x9_and_passes_back_when_the_count_wins(engine):
    """9x9 (position biases cropped): a move; after black passes with only a
    handful of stones on the board, white (komi 7.5) passes back."""
    e = engine("--policy-only")
    e.ok("boardsize 9")
    e.ok("clear_board")
    e.ok("play b E5")
    assert e.ok("genmove w") not in ("pass", "resign")
    e.ok("play b pass")
    assert e.ok("genmove w") == "pass"
    # the count behind that pass asked the queue for nothing: no worker serves it
    assert e.player.search.queue.stats.requested == 0 and e.player._worker is None


def _lost_9x9(e) -> None:
    """Black's wall on row 2 (three eyes on row 1) against White's on row
    3: White's 63 points to Black's 18, and White passes."""
    e.ok("boardsize 9")
    e.ok("clear_board")
    for col in "ABCDEFGHJ":
        e.ok(f"play b {col}2")
        e.ok(f"play w {col}3")
    e.ok("play b C1")
    e.ok("play w E7")
    e.ok("play b G1")
    e.ok("play w pass")


def test_policy_only_resigns_a_lost_game_after_the_opponents_pass(engine):
    """After the opponent's pass the count and its playouts (White 45
    points up and more) say the game is lost: policy-only play resigns
    instead of filling the board, and plays on where --resign 0 says
    never to resign."""
    e = engine("--policy-only")
    _lost_9x9(e)
    assert e.ok("genmove b") == "resign"
    e = engine("--policy-only", "--resign", "0")
    _lost_9x9(e)
    assert e.ok("genmove b") not in ("pass", "resign")


def _opening(e, moves: int) -> list[str]:
    e.ok("boardsize 19")
    e.ok("clear_board")
    return [e.ok(f"genmove {'bw'[i % 2]}") for i in range(moves)]


def test_policy_sample_varies_the_opening_then_plays_the_best(engine):
    """--policy-sample 6: the first six moves are drawn from the network's
    probabilities (seeded: the same seed, the same game), the moves after
    them are its best again; without it every game is the same."""
    best = _opening(engine("--policy-only"), 8)
    assert _opening(engine("--policy-only"), 8) == best
    games = [_opening(engine("--policy-only", "--policy-sample", "6", "--seed", str(s)), 6)
             for s in range(1, 9)]
    assert len({tuple(g) for g in games}) > 1
    assert games[0] == _opening(engine("--policy-only", "--policy-sample", "6", "--seed", "1"), 6)
    e = engine("--policy-only", "--policy-sample", "2", "--seed", "3")
    _opening(e, 2)
    probs = e.player.move_probabilities()
    assert e.ok("genmove b") == e.player.game.board.name(max(probs, key=probs.get))


def test_rank_planes_change_the_network_input(engine):
    low = engine("--rank", "1d")
    high = engine("--rank", "9d")
    assert low.player.config.search.nn_rank == 1 and high.player.config.search.nn_rank == 9
    for e in (low, high):
        e.ok("boardsize 19")
        e.ok("play b Q16")
    p1 = low.player.move_probabilities()
    p9 = high.player.move_probabilities()
    assert set(p1) == set(p9)
    assert any(abs(p1[p] - p9[p]) > 1e-6 for p in p1)
    assert sum(p9.values()) == pytest.approx(1.0, abs=1e-4)


def test_heat_map_shows_the_network_policy(engine):
    e = engine("--rollouts", "200")
    e.ok("boardsize 19")
    out = e.ok("dg-priors")
    influence, labels = out.split("\n")
    assert influence.startswith("INFLUENCE ") and labels.startswith("LABEL ")
    probs = e.player.move_probabilities()
    best = max(probs, key=probs.get)
    first_vertex, first_value = influence.split()[1:3]
    assert first_vertex == e.player.game.board.name(best) and first_value == "1.00"
    assert labels.split()[2] == str(round(100 * probs[best]))


def test_search_with_delayed_priors_through_gtp(engine):
    e = engine("--rollouts", "600")
    e.ok("boardsize 9")
    move = e.ok("genmove b")
    assert move not in ("pass", "resign")
    r = e.player.last_result
    assert r.net is not None and r.net.requested > 0
    assert "delayed priors from policy network res6v" in e.ok("gomill-describe_engine")
    # lz-analyze's prior field is the network's probability at the root
    cands = r.candidates
    assert 0.99 < sum(c.prior for c in cands) < 1.01


def run_cli(*args: str, input: str = "quit\n") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.gtp", *args], cwd=ROOT, input=input,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args, message", [
    (["--rank", "10d"], "--rank"),
    (["--rank", "5k"], "--rank"),
    (["--policy-only", "--network", "none"], "--policy-only needs a network"),
    (["--policy-sample", "10"], "--policy-sample applies to --policy-only"),
    (["--policy-only", "--policy-sample", "-1"], "policy-sample"),
    (["--policy-symmetries", "8"], "--policy-symmetries applies to --policy-only"),
    (["--policy-only", "--policy-symmetries", "4"], "--policy-symmetries: invalid choice"),
    (["--network", "/nonexistent/net.pt"], "/nonexistent/net.pt does not exist"),
    (["--batch", "0"], "--batch"),
    (["--ownership", "/nonexistent/own.pt"], "--ownership: checkpoint file /nonexistent/own.pt"),
    (["--ownership", str(ROOT / "nets/weights/res6.pt")],
     "holds a policy network, not an ownership network"),
])
def test_bad_network_options_exit_with_a_message(args, message):
    r = run_cli(*args)
    assert r.returncode != 0
    assert message in r.stderr
    assert r.stdout == ""


def test_foreign_network_file_is_refused(tmp_path):
    bad = tmp_path / "net.pt"
    bad.write_bytes(b"not a checkpoint at all")
    r = run_cli("--network", str(bad))
    assert r.returncode == 2 and str(bad) in r.stderr and r.stdout == ""


def test_a_network_says_whether_it_brings_values_and_misfits_are_refused(tmp_path):
    """res6 plays with priors only and the log says so; a value network
    says its values join the rollouts; a checkpoint of other input planes,
    or one whose weights lack a head its model has, is refused at start
    with a message naming the file."""
    from nets.checkpoint import save_checkpoint
    from nets.models import build_model, model_config, model_from_config
    r = run_cli("--network", str(ROOT / "nets/weights/res6.pt"), "--size", "9")
    assert r.returncode == 0 and "no value head: priors only" in r.stderr
    value = tmp_path / "v.pt"
    save_checkpoint(value, build_model("res6v", width=8, blocks=1), metadata={})
    r = run_cli("--network", str(value), "--size", "9", "--rollouts", "200",
                input="genmove b\nquit\n")
    assert r.returncode == 0 and "value head: delayed values join the rollouts" in r.stderr
    assert r.stdout.startswith("= ") and "with a value)" in r.stderr
    planes = tmp_path / "p20.pt"
    save_checkpoint(planes, model_from_config(model_config("res6", in_planes=20)), metadata={})
    r = run_cli("--network", str(planes))
    assert r.returncode == 2 and r.stdout == ""
    assert f"checkpoint {planes} holds a model of 20 input planes" in r.stderr
    headless = tmp_path / "headless.pt"
    torch = pytest.importorskip("torch")
    blob = torch.load(value, weights_only=True)
    blob["weights"] = {k: v for k, v in blob["weights"].items() if not k.startswith("value_")}
    torch.save(blob, headless)
    r = run_cli("--network", str(headless))
    assert r.returncode == 2 and f"checkpoint {headless}: weights do not fit" in r.stderr


def test_policy_only_refuses_sizes_its_network_does_not_serve(engine, tmp_path):
    """A 9x9-only network (res9) alone: another size is refused at start
    (exit 2, a message) and by boardsize (GTP's "unacceptable size"), and
    the engine stays at its size; with the search, other sizes are played
    with the heuristic priors."""
    import torch
    from nets.checkpoint import save_checkpoint
    from nets.models import build_model
    path = tmp_path / "res9.pt"
    torch.manual_seed(0)        # untrained weights whose best move is not the pass output
    save_checkpoint(path, build_model("res9"), metadata={})
    r = run_cli("--network", str(path), "--policy-only", "--size", "19")
    assert r.returncode == 2 and r.stdout == ""
    assert "policy-only play on 19x19: the network does not serve that size" in r.stderr
    e = engine("--network", str(path), "--policy-only", "--size", "9")
    assert e.fail("boardsize 13") == "unacceptable size (the network does not serve it)"
    assert e.player.board_size() == 9 and e.ok("genmove b") not in ("pass", "resign")
    e = engine("--network", str(path), "--rollouts", "200", "--size", "9")
    e.ok("boardsize 13")
    assert e.ok("genmove b") not in ("pass", "resign")


def test_new_thread_count_restarts_the_prior_worker(engine):
    e = engine("--rollouts", "400")
    e.ok("boardsize 9")
    old = e.player._worker
    e.ok("dg-params threads 2")
    assert not old.is_alive()
    new = e.player._worker
    assert new is not old and new.is_alive() and new.queue is e.player.search.queue
    assert e.ok("genmove b") not in ("pass", "resign")
    assert e.player.last_result.net.requested > 0


def test_ownership_network_through_gtp(tmp_path):
    """An ownership checkpoint works with --ownership (its opinion blended
    into final_score's count) and is refused as --network."""
    from nets.checkpoint import save_checkpoint
    from nets.models import build_model
    own = tmp_path / "own.pt"
    save_checkpoint(own, build_model("gocnn", width=4, layers=1), metadata={})
    r = run_cli("--network", str(own))
    assert r.returncode == 2 and "holds an ownership network, not a policy network" in r.stderr
    r = run_cli("--ownership", str(own), "--rollouts", "200", "--size", "9",
                input="play b e5\nfinal_score\nfinal_status_list dead\nquit\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("=\n\n= B+") and "ownership network gocnn" in r.stderr


@pytest.mark.parametrize("name,size", [
    (name, size) for name in ("maddison12", "small6", "res6", "clark8", "clark8_untied", "dann6",
                              "res6v", "res6vs", "res10v")
    for size in (9, 19)] + [("res9", 9)])
def test_every_policy_model_plays_with_network_path(engine, tmp_path, name, size):
    """Every policy net of the registry loads with --network PATH (the ones
    on other inputs, Clark & Storkey's and GoCNN's planes, compute them from
    Table 1's inside the model) and answers legal moves, alone and as the
    search's priors, on the sizes it serves (res9: 9x9 only).  Weights and
    the engine's sampling of the opening moves are seeded: an untrained
    res9 ranks its pass output first now and then."""
    import torch
    from nets.checkpoint import save_checkpoint
    from nets.models import MODELS, build_model
    assert {n for n, c in MODELS.items() if c.get("task", "policy") == "policy"} == \
        {"maddison12", "small6", "res6", "clark8", "clark8_untied", "dann6", "res9", "res6v",
         "res6vs", "res10v"}
    path = tmp_path / f"{name}.pt"
    torch.manual_seed(1)
    save_checkpoint(path, build_model(name), metadata={})
    e = engine("--network", str(path), "--policy-only", "--size", str(size), "--seed", "1")
    assert f"policy network {name} alone" in e.ok("gomill-describe_engine")
    moves = [e.ok(f"genmove {c}") for c in "bwbw"]
    assert all(m not in ("pass", "resign") for m in moves) and len(set(moves)) == 4
    e = engine("--network", str(path), "--rollouts", "300", "--size", str(size))
    assert e.ok("genmove b") not in ("pass", "resign")
