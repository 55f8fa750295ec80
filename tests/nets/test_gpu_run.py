"""nets/gpu_run.sh, the one command of a GPU run, dry-run on the CPU with
tiny caches and a tiny maddison12: it resumes the previous run's
checkpoint, and leaves its six files under $OUT."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from nets import checkpoint as ckpt  # noqa: E402
from nets import data as D  # noqa: E402
from nets.models import build_model  # noqa: E402
from engine import sgf  # noqa: E402
from nets_helpers import random_game, write_sgf  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "nets" / "gpu_run.sh"


def _dry_run(data: Path, out: Path, **settings: str) -> str:
    """Run the script on DATA into OUT with the dry run's small settings
    (the CPU, tiny batches and held-out samples) and ``settings`` on top;
    it must succeed.  Its train.log."""
    env = dict(os.environ, OUT=str(out), DEVICE="cpu", MINUTES="2", BATCH="16", WORKERS="0",
               VAL_POSITIONS="64", POSITIONS="50", PYTHON=sys.executable, **settings)
    r = subprocess.run(["bash", str(SCRIPT), str(data)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return (out / "train.log").read_text()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_dry_run_resumes_and_returns_six_files(tmp_path) -> None:
    """... and, with GEN9, plays 9x9 games beside the training (self-play
    here: no GNU Go in DATA) and brings back what it kept."""
    sgfs = tmp_path / "sgf"
    for i in range(8):
        write_sgf(sgfs / f"g{i}.sgf", random_game(i, 40))
    data = tmp_path / "gpu"
    for name in ("train", "test19", "test19_kgs"):
        D.build_cache(sgfs, data / f"{name}.npz", val_fraction=0.3, workers=1, log=None)
    torch.manual_seed(0)
    ckpt.save_checkpoint(data / "maddison12.pt", build_model("maddison12", width=8, layers=3),
                         metadata={"train_state": {"step": 5, "optimizer": "adam",
                                                   "base_lr": 0.001, "batch": 16}})
    out = tmp_path / "out"
    log = _dry_run(data, out, STEPS="7", HALVE_AT="6", MODEL="maddison12",
                   EXTRA="--width 8 --layers 3 --threads 1", GEN9="1", GEN9_SEED="7")
    assert sorted(p.name for p in out.iterdir()) == [
        "accuracy.txt", "gen9-s7.tar.xz", "maddison12.best.pt",
        "maddison12.curves.png", "maddison12.metrics.jsonl", "maddison12.pt", "train.log"] or \
        sorted(p.name for p in out.iterdir()) == [     # no matplotlib: no curves
        "accuracy.txt", "gen9-s7.tar.xz", "maddison12.best.pt",
        "maddison12.metrics.jsonl", "maddison12.pt", "train.log"]
    assert f"--resume-from {data}/maddison12.pt" in log
    assert "holds no optimizer state: a fresh adam goes on from step 5" in log
    last = ckpt.load_checkpoint(out / "maddison12.pt")
    assert last.metadata["train_state"]["step"] == 7 and last.optimizer is not None
    assert (out / "accuracy.txt").read_text().count("data dir") == 2
    import tarfile
    with tarfile.open(out / "gen9-s7.tar.xz") as tar:
        names = tar.getnames()
        generated = tar.extractfile("generate.log").read().decode()
    games = [n for n in names if n.startswith("gen9-s7/")]
    assert sorted(names) == sorted(["gen9-s7", "generate.log", *games])
    assert all(n.startswith("gen9-s7/gen-") for n in games)
    assert f"gen9-s7.tar.xz: {len(games)} games" in log
    assert "generate: 0 of 100000 games already" in generated


def _value_data(tmp_path: Path) -> Path:
    """DATA for a value net: caches that keep the games' results, and the
    packed ownership labels of the training games."""
    sgfs = tmp_path / "sgf"
    for i in range(8):
        text = sgf.dumps(19, 6.5, [], random_game(i, 40), result="BW"[i % 2] + "+R")
        (sgfs / f"g{i}.sgf").parent.mkdir(exist_ok=True)
        (sgfs / f"g{i}.sgf").write_text(text)
    data = tmp_path / "gpu"
    for name in ("train", "test19", "test19_kgs"):
        D.build_cache(sgfs, data / f"{name}.npz", val_fraction=0.3, workers=1, log=None)
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"source": f"g{i}.sgf", "agrees": True,
                                          "owner": "X" * 180 + "O" * 181}) + "\n"
                              for i in range(8)))
    from nets.ownership import pack_labels
    assert pack_labels(labels, data / "labels.npz") == 8
    return data


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_dry_run_of_the_value_net_starts_from_the_policy_net(tmp_path) -> None:
    """The default model, res6v, with no checkpoint of its own: its trunk and
    policy head come from the committed res6, its ownership head learns the
    packed labels that travel with the data, and value.txt scores its value
    head on the held-out caches (which keep the games' results)."""
    data = _value_data(tmp_path)
    out = tmp_path / "out"
    log = _dry_run(data, out, STEPS="3", EXTRA="--threads 1",
                   WEIGHTS=str(tmp_path / "none"))   # no res6v.pt there
    assert "--init-from nets/weights/res6.pt --head-lr-scale 5" in log
    assert "value and ownership heads x5" in log
    assert "labels " in log and "(8 games used, 0 disagreeing" in log
    assert "ownership loss x1" in log
    assert ckpt.load_checkpoint(out / "res6v.pt").metadata["steps"] == 3
    value = (out / "value.txt").read_text()
    assert value.count("| 0-49 |") == 2, value


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_dry_run_of_a_deeper_value_net_grows_the_default(tmp_path) -> None:
    """res10v with no checkpoint of its own starts from the committed res6v:
    every tensor of it (the trunk's six blocks and the three trained heads,
    at the common learning rate), the four new blocks as the identity."""
    data = _value_data(tmp_path)
    out = tmp_path / "out"
    log = _dry_run(data, out, STEPS="2", EXTRA="--threads 1", MODEL="res10v")
    assert "--init-from nets/weights/res6v.pt --positions-per-game 2" in log
    assert "from nets/weights/res6v.pt: 94 of 142 tensors; new: blocks" in log
    assert "heads x" not in log
    last = ckpt.load_checkpoint(out / "res10v.pt")
    assert last.metadata["steps"] == 2 and last.metadata["config"]["blocks"] == 10
    assert (out / "value.txt").read_text().count("| 0-49 |") == 2


def test_missing_data_is_named(tmp_path) -> None:
    env = dict(os.environ, OUT=str(tmp_path / "out"), PYTHON=sys.executable)
    r = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "nodata")], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "nodata/train.npz is missing" in r.stderr
