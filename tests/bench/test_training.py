"""Quick checks of bench.training: the table of a tiny run on a synthetic
cache, and the exit status of bad input."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from bench import training  # noqa: E402
from nets import data as D  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "nets"))
from nets_helpers import make_sgf_dir  # noqa: E402

ROW = re.compile(r"^\| small6 \| 384,594 \| (?P<threads>\d) \| contiguous \| (?P<fp32>[\d,]+) \| "
                 r"(?P<bf16>[\d,]+) \| \d+\.\d\d \|$")


def test_tiny_run_prints_one_row_per_thread_count(tmp_path, capsys) -> None:
    make_sgf_dir(tmp_path / "games", n_good=6, n_moves=40)
    cache = tmp_path / "cache.npz"
    D.build_cache(tmp_path / "games", cache, val_fraction=0.2, workers=1, log=None)
    assert training.main([str(cache), "--models", "small6", "--threads", "1,2",
                          "--seconds", "0.3", "--batch", "8"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith(f"nets.train steps on {cache} (6 games), batch 8, Adam")
    assert lines[1] == ("| network | params | threads | layout | fp32 pos/s | bf16 pos/s "
                        "| bf16/fp32 |")
    rows = [ROW.match(line) for line in lines[3:]]
    assert all(rows) and [r["threads"] for r in rows] == ["1", "2"], lines


def test_a_value_net_in_both_layouts(tmp_path, capsys) -> None:
    make_sgf_dir(tmp_path / "games", n_good=6, n_moves=40)
    cache = tmp_path / "cache.npz"
    D.build_cache(tmp_path / "games", cache, val_fraction=0.2, workers=1, log=None)
    assert training.main([str(cache), "--models", "res6v", "--threads", "1", "--precisions",
                          "fp32", "--seconds", "0.3", "--batch", "8", "--memory-formats",
                          "contiguous,channels_last"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(" | ")[3] for line in lines[3:5]] == ["contiguous", "channels_last"]
    assert len(lines) == 5
    assert training.main([str(cache), "--memory-formats", "sideways"]) == 2
    assert "unknown ['sideways']" in capsys.readouterr().err


def test_a_value_net_learns_ownership_from_labels(tmp_path, capsys) -> None:
    """--labels: res6v's step with its ownership head on the labelled games'
    positions, as nets.train --labels trains it; a file that labels no game
    of the cache, or is not there, is refused."""
    make_sgf_dir(tmp_path / "games", n_good=6, n_moves=40)
    cache = tmp_path / "cache.npz"
    D.build_cache(tmp_path / "games", cache, val_fraction=0.2, workers=1, log=None)
    sources = [s.decode() for s in D.load_cache(cache).source]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"source": s, "agrees": True, "owner": "X" * 361})
                              + "\n" for s in sources[:4]))
    assert training.main([str(cache), "--models", "res6v", "--threads", "1", "--precisions",
                          "fp32", "--seconds", "0.3", "--batch", "8",
                          "--labels", str(labels)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert ", ownership labels of 4 games for value nets, on cpu" in lines[0]
    assert lines[3].startswith("| res6v | 552,213 | 1 | channels_last | ")
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"source": "elsewhere.sgf", "agrees": True, "owner": "X" * 361})
                     + "\n")
    for path, message in ((other, "other.jsonl"), (tmp_path / "gone.jsonl", "gone.jsonl")):
        assert training.main([str(cache), "--models", "res6v", "--labels", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --labels") and message in err, err


def test_the_profile_splits_a_step_into_its_phases(tmp_path, capsys) -> None:
    make_sgf_dir(tmp_path / "games", n_good=6, n_moves=40)
    cache = tmp_path / "cache.npz"
    D.build_cache(tmp_path / "games", cache, val_fraction=0.2, workers=1, log=None)
    assert training.main([str(cache), "--models", "small6", "--threads", "1", "--precisions",
                          "fp32", "--seconds", "0.3", "--batch", "8", "--profile"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    head = lines.index("One step of batch 8, milliseconds (share of the step):")
    assert lines[head + 2] == ("| network | threads | layout | precision | batch | forward | "
                               "backward | clip | optimiser | positions/s | without the batch | "
                               "GFLOP a position | TFLOP/s in the passes |")
    row = lines[head + 4].split(" | ")
    assert row[:4] == ["| small6", "1", "contiguous", "fp32"]
    shares = [int(re.fullmatch(r"[\d.]+ \((\d+)%\)", cell)[1]) for cell in row[4:9]]
    assert 95 <= sum(shares) <= 105, row
    assert int(row[10]) >= int(row[9]) > 0      # a step without its batch is faster
    assert float(row[11]) > 0.1         # small6: about 0.8 GFLOP a position


@pytest.mark.gpu
def test_a_training_step_on_the_gpu(tmp_path, capsys) -> None:
    """Runs where CUDA is present: the timed steps and their profile on the
    GPU, bf16, both layouts."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    make_sgf_dir(tmp_path / "games", n_good=6, n_moves=40)
    cache = tmp_path / "cache.npz"
    D.build_cache(tmp_path / "games", cache, val_fraction=0.2, workers=1, log=None)
    assert training.main([str(cache), "--models", "res6v", "--threads", "1", "--precisions",
                          "bf16", "--seconds", "0.5", "--batch", "64", "--device", "cuda",
                          "--memory-formats", "contiguous,channels_last", "--profile"]) == 0
    out = capsys.readouterr().out
    assert "on cuda" in out.splitlines()[0]
    assert out.count("| res6v | 1 | ") == 2 and out.count("| bf16 |") == 2


@pytest.mark.parametrize("argv, message", [
    (["{tmp}/missing.npz"], "missing.npz does not exist"),
    (["{tmp}/missing.npz", "--models", "nosuch"], "unknown model name"),
    (["{tmp}/missing.npz", "--threads", "0"], "--threads must be"),
])
def test_bad_input_exits_2(argv, message, tmp_path, capsys) -> None:
    assert training.main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    assert message in capsys.readouterr().err


def test_a_device_that_is_not_here_is_refused(tmp_path, capsys) -> None:
    make_sgf_dir(tmp_path / "games", n_good=6, n_moves=40)
    cache = tmp_path / "cache.npz"
    D.build_cache(tmp_path / "games", cache, val_fraction=0.2, workers=1, log=None)
    assert training.main([str(cache), "--device", "tpu"]) == 2
    assert "--device: unknown 'tpu'" in capsys.readouterr().err
