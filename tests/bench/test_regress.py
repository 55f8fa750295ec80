"""The engine's gogui-regress suite (bench/regress): every test passes.

GoGui's gogui-regress runs it where it is installed (found on PATH or
through $GOGUI_REGRESS); elsewhere, as in CI, a small runner here reads the
same files: GTP commands, ``#? [pattern]`` after a numbered command (a
Java regular expression matched against the whole answer; ``!`` negates,
a trailing ``*`` marks a known failure), the engine started in the suite's
folder as gogui-regress starts it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gtp.client import GtpClient, GtpClientError

SUITE = Path(__file__).resolve().parent.parent.parent / "bench" / "regress"
ENGINE = [sys.executable, "-m", "engine.gtp", "--quiet", "--seed", "1"]


def suite_files() -> list[str]:
    return [line.strip() for line in (SUITE / "suite").read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def run_tst(path: Path) -> list[tuple[str, bool]]:
    """(test, passed) for every ``#?`` line of one file; a known failure
    that fails counts as passed."""
    results = []
    with GtpClient(ENGINE, timeout=300, cwd=str(path.parent)) as engine:
        command, answer, error = None, "", False
        for raw in path.read_text().splitlines():
            line = raw.strip()
            if line.startswith("#?"):
                assert command is not None, f"{path.name}: pattern without a command"
                pattern = line[2:].strip()
                known_failure = pattern.endswith("*")
                pattern = pattern.rstrip("*")
                assert pattern.startswith("[") and pattern.endswith("]"), line
                pattern = pattern[1:-1].strip()
                negate = pattern.startswith("!")
                matched = re.fullmatch(pattern.lstrip("!"), answer, re.S | re.M) is not None
                passed = not error and matched != negate
                results.append((f"{path.name}: {command} -> {answer!r}, expected [{pattern}]",
                                passed or known_failure))
                command = None
            elif line and not line.startswith("#"):
                words = line.split(maxsplit=1)
                command = words[1] if words[0].isdigit() else line
                try:
                    answer, error = engine.send(command), False
                except GtpClientError as e:
                    if not e.failed:
                        raise
                    answer, error = str(e), True
    return results


@pytest.mark.parametrize("name", suite_files())
def test_suite_file(name: str) -> None:
    results = run_tst(SUITE / name)
    assert results, f"{name} has no tests"
    failed = [test for test, passed in results if not passed]
    assert not failed, failed


def test_with_gogui_regress(tmp_path) -> None:
    """The same suite through GoGui's own gogui-regress, where installed:
    exit status 0 (no unexpected failure, no crash)."""
    regress = os.environ.get("GOGUI_REGRESS") or shutil.which("gogui-regress")
    if not regress:
        pytest.skip("gogui-regress not installed (set GOGUI_REGRESS or put it on PATH)")
    program = " ".join(ENGINE)
    done = subprocess.run([regress, "-long", "-output", str(tmp_path), program, "@suite"],
                          cwd=SUITE, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
