"""``python -m nets.train --plot METRICS.jsonl OUT.png``: the curves of the
shipped network's metrics, and the error for a missing metrics file."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("matplotlib")

from nets import train as T  # noqa: E402

METRICS = Path(__file__).resolve().parents[2] / "nets" / "weights" / "small6.metrics.jsonl"


def test_plot_shipped_metrics(tmp_path, capsys) -> None:
    png = tmp_path / "curves.png"
    assert T.main(["--plot", str(METRICS), str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 10_000 < png.stat().st_size < 200_000
    assert "8 evaluations, steps 0..2800" in capsys.readouterr().out


def test_plot_missing_metrics(tmp_path, capsys) -> None:
    assert T.main(["--plot", str(tmp_path / "none.jsonl"), str(tmp_path / "x.png")]) == 2
    assert "none.jsonl" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()
