"""``python -m nets.train --plot METRICS.jsonl [...] OUT.png``: the curves of the
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


def test_plot_compares_runs(tmp_path, capsys) -> None:
    """Several metrics files: one plot, a line a run, named by its folder."""
    for name in ("contiguous", "channels_last"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "metrics.jsonl").write_bytes(METRICS.read_bytes())
    png = tmp_path / "ab.png"
    assert T.main(["--plot", str(tmp_path / "contiguous" / "metrics.jsonl"),
                   str(tmp_path / "channels_last" / "metrics.jsonl"), str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert capsys.readouterr().out.strip() == (
        f"{png}: 2 runs, contiguous 8 evaluations, channels_last 8 evaluations")
    assert T.main(["--plot", str(METRICS), str(tmp_path / "none.jsonl"), str(png)]) == 2
