"""bench.async on a tiny run: the table's layout and numbers that must
hold however loaded the machine is (the network evaluated something, the
fractions are fractions); bad arguments exit with a message."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
A = importlib.import_module("bench.async")      # "async" is a keyword: no import statement


def test_tiny_run_prints_one_row_per_size(capsys, tmp_path) -> None:
    out = tmp_path / "rows.json"
    assert A.main(["--seconds", "2", "--sizes", "9", "--json", str(out)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("# ") and "network res6v on cpu, batch 128" in lines[0]
    assert "(filled for up to 0 ms)" in lines[0]          # a CPU worker takes what is waiting
    assert lines[1].startswith("| board | rollouts/s, no network | rollouts/s, delayed priors |")
    assert len(lines) == 4 and lines[3].startswith("| 9x9 | ")
    import json
    (row,) = json.loads(out.read_text())
    assert row["rollouts_per_s_null"] > 0 and row["rollouts_per_s_net"] > 0
    assert row["evaluated"] > 0 and 0 < row["fraction_evaluated"] <= 1
    assert row["valued"] == row["evaluated"]        # res6v brings a value with every reply
    assert row["lag_p95_ms"] >= row["lag_median_ms"] >= 0
    assert re.search(r"\| \d+\.\d% \([\d,]+ of [\d,]+\) \|", lines[3])   # thousands separated


@pytest.mark.parametrize("args, message", [
    (["--sizes", "4"], "the network takes 5..19"),
    (["--sizes", "x"], "--sizes"),
    (["--network", "/nonexistent.pt"], "does not exist"),
    (["--seconds", "0"], "must be positive"),
    (["--max-wait", "-1"], "--max-wait must be a number of milliseconds >= 0"),
])
def test_bad_arguments(args, message) -> None:
    r = subprocess.run([sys.executable, "-m", "bench.async", *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and message in r.stderr and r.stdout == ""
