"""Golden transcripts: every transcripts/NAME.gtp, served through serve() with
the fake player, must produce exactly transcripts/NAME.ref on stdout."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from gtp_fakes import FakePlayer

from gtp import serve, standard_registry

TRANSCRIPTS = Path(__file__).resolve().parent / "transcripts"
CASES = sorted(TRANSCRIPTS.glob("*.gtp"))


def test_transcripts_exist() -> None:
    assert len(CASES) >= 4
    for case in CASES:
        assert case.with_suffix(".ref").is_file(), f"missing {case.with_suffix('.ref').name}"


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_transcript(case: Path) -> None:
    # newline="" keeps CR and other bytes exactly as written in the files.
    with open(case, encoding="utf-8", newline="") as fh:
        source = fh.read()
    with open(case.with_suffix(".ref"), encoding="utf-8", newline="") as fh:
        expected = fh.read()
    out = io.StringIO()
    serve(standard_registry(FakePlayer()), io.StringIO(source, newline=""), out)
    assert out.getvalue() == expected
