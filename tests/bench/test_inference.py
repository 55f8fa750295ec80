"""Quick checks of bench.inference: the table of a tiny run (the shipped
net and an untrained registry model, batch 1, 0.2 s) and the exit status
and message of bad input."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from bench import inference as I  # noqa: E402
from engine.features import LEGAL, N_PLANES, ONES  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| (?P<net>.+?) \| (?P<params>[\d,]+) \| (?P<threads>\d+) \| "
                 r"(?P<batch>\d+) \| (?P<fp32>[\d,]+) \| (?P<bf16>[\d,]+) \| "
                 r"(?P<ratio>\d+\.\d\d) \|$")


def _rows(text: str) -> list[re.Match]:
    lines = text.strip().splitlines()
    assert lines[0].startswith("PolicyEvaluator.evaluate, 19x19, device cpu (auto precision: ")
    assert lines[1] == ("| network | params | threads | batch | fp32 pos/s | bf16 pos/s |"
                        " bf16/fp32 |")
    assert lines[2] == "|---|---:|---:|---:|---:|---:|---:|"
    rows = [ROW.match(line) for line in lines[3:]]
    assert all(rows), lines[3:]
    return rows


def test_default_checkpoint_and_registry_model(capsys) -> None:
    rc = I.main(["--batches", "1", "--seconds", "0.2", "--threads", "1"])
    assert rc == 0
    (row,) = _rows(capsys.readouterr().out)
    assert row["net"].startswith("res6v (") and row["net"].endswith("res6v.pt)")
    # batch norm folded into the convolutions: 552,213 trained parameters, 551,349 here
    assert row["params"] == "551,349" and row["batch"] == "1" and row["threads"] == "1"
    fp32, bf16 = (float(row[k].replace(",", "")) for k in ("fp32", "bf16"))
    assert fp32 > 0 and bf16 > 0
    assert abs(bf16 / fp32 - float(row["ratio"])) < 0.05 * bf16 / fp32 + 0.01   # rounded cells

    rc = I.main(["--model", "small6", "--checkpoint", str(I.DEFAULT_WEIGHTS),
                 "--batches", "1,3", "--seconds", "0.2", "--threads", "1,2"])
    assert rc == 0
    rows = _rows(capsys.readouterr().out)
    assert [(r["net"].split()[0], r["threads"], r["batch"]) for r in rows] == \
        [(n, t, b) for n in ("small6", "res6v") for t in "12" for b in "13"]
    assert rows[0]["net"] == "small6 (untrained)"


def test_positions_are_real_planes() -> None:
    x, colors = I.positions(9, n=3)
    assert x.shape == (3, N_PLANES, 9, 9) and x.dtype == np.uint8
    assert set(colors.tolist()) <= {1, 2}
    assert (x[:, ONES] == 1).all()
    stones = x[:, :2].sum(axis=(1, 2, 3))
    assert stones[0] > 0 and (np.diff(stones) > 0).all()      # longer games, more stones
    assert (x[:, LEGAL].sum(axis=(1, 2)) < 81).all()


@pytest.mark.parametrize("argv, message", [
    (["--checkpoint", "{tmp}/missing.pt"], "missing.pt does not exist"),
    (["--model", "nosuchnet"], "unknown model name 'nosuchnet'"),
    (["--batches", "1,x"], "--batches must be"),
    (["--batches", "0"], "--batches must be"),
    (["--seconds", "0"], "--seconds must be positive"),
    (["--threads", "0"], "--threads must be comma-separated positive integers"),
    (["--precisions", "fp16"], "--precisions must be"),
])
def test_bad_input_exits_2(argv, message, tmp_path, capsys) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert I.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err


def test_command_line_exit_status(tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-m", "bench.inference", "--checkpoint",
                           str(tmp_path / "nothing.pt"), "--seconds", "0.1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "nothing.pt does not exist" in proc.stderr
    assert proc.stdout == ""


def test_the_layout_is_the_engines_unless_asked(capsys) -> None:
    common = ["--batches", "1", "--seconds", "0.1", "--threads", "1", "--precisions", "fp32"]
    assert I.main(common) == 0
    assert "), channels_last, " in capsys.readouterr().out.splitlines()[0]
    assert I.main(common + ["--memory-format", "contiguous"]) == 0
    assert "), contiguous, " in capsys.readouterr().out.splitlines()[0]
