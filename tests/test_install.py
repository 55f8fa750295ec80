"""The package as a user installs it.  The wheel built from this checkout is
installed into a fresh virtual environment outside the repository, and its
console command, ``delayed-go``, plays a short GTP game from another
directory: the shipped networks and patterns are found as package data,
numba's cache goes to the user's cache folder ($XDG_CACHE_HOME), and nothing
is written into the installed package, whose folder may be read-only.

Nothing is downloaded: the wheel is built without build isolation (with
this environment's setuptools), installed with --no-deps --no-index, and
the fresh environment finds the dependencies (numpy, numba, torch, sgfmill)
through a .pth file naming this environment's site-packages.

The fresh install compiles the kernels at its first start, a minute or two:
the test is slow by nature.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "engine", "gtp", "nets", "bench")
COMPILING = "compiling the engine's kernels"
GAME = "name\nversion\nboardsize 9\nclear_board\nplay b E5\ngenmove w\nfinal_score\nquit\n"


@dataclass(frozen=True)
class Install:
    wheel: Path
    command: Path           # the console command in the fresh environment
    site: Path              # its site-packages
    cache_home: Path        # $XDG_CACHE_HOME of the runs below


def _run(argv: list, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                          timeout=600, **kw)
    assert proc.returncode == 0, f"{argv[:4]} failed:\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def install(tmp_path_factory) -> Install:
    for module, why in (("pip", "installing"), ("setuptools", "building the wheel"),
                        ("ensurepip", "a virtual environment with pip")):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{why} needs {module}, which this Python lacks")
    needed = int(re.search(r'"setuptools>=(\d+)', (ROOT / "pyproject.toml").read_text())[1])
    found = importlib.metadata.version("setuptools")
    if int(found.split(".")[0]) < needed:
        pytest.skip(f"building the wheel without build isolation (so without downloading) "
                    f"needs setuptools>={needed} beside this Python, which has {found}")
    base = tmp_path_factory.mktemp("install")
    source = base / "source"        # a copy: the build writes build/ and egg-info
    source.mkdir()
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc", "*.egg-info")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=skip)
        else:
            shutil.copy2(ROOT / name, source / name)
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
          "--no-index", "-w", base / "dist", source])
    wheel, = (base / "dist").glob("delayed_go-*.whl")

    venv = base / "venv"
    _run([sys.executable, "-m", "venv", venv])
    python = venv / "bin" / "python"
    _run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel])
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
                .stdout.strip())
    here = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    (site / "dependencies-of-the-test.pth").write_text("\n".join(here) + "\n")
    return Install(wheel, venv / "bin" / "delayed-go", site, base / "cache")


def play(install: Install, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The console command with the GAME transcript, as a GUI starts it: no
    PYTHONPATH, no NUMBA_CACHE_DIR (the test's own process sets one)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR", "VIRTUAL_ENV", "PYTHONHOME")}
    env["XDG_CACHE_HOME"] = str(install.cache_home)
    cwd.mkdir(exist_ok=True)
    return subprocess.run([str(install.command), *args], input=GAME, capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=900)


def answers(stdout: str) -> list[str]:
    assert stdout.endswith("\n\n"), repr(stdout[-200:])
    return stdout[:-2].split("\n\n")


def test_the_wheel_holds_the_command_the_networks_and_the_patterns(install: Install) -> None:
    names = set(zipfile.ZipFile(install.wheel).namelist())
    for data in ("engine/data/patterns.npz", "nets/weights/res6.pt", "nets/weights/res6own.pt",
                 "engine/gtp.py", "gtp/server.py", "nets/evaluator.py"):
        assert data in names
    entry_points, = (n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(install.wheel).read(entry_points).decode()
    assert re.search(r"^delayed-go = engine\.gtp:cli$", text, re.M), text
    assert not any(n.startswith("tests/") for n in names)


def test_the_installed_command_plays_from_another_directory(install: Install,
                                                           tmp_path: Path) -> None:
    version = install.wheel.name.split("-")[1]
    first = play(install, "--rollouts", "300", "--seed", "1", cwd=tmp_path / "elsewhere")
    assert first.returncode == 0, first.stderr[-3000:]
    got = answers(first.stdout)
    assert got[:5] == ["= delayed-go", f"= {version}", "=", "=", "="]
    assert re.fullmatch(r"= ([A-HJ][1-9]|pass|resign)", got[5]), got[5]
    assert re.fullmatch(r"= (B\+|W\+)\d+(\.\d)?|= 0", got[6]), got[6]
    assert got[7:] == ["="]
    # the shipped weights, read from the installed package
    weights = install.site / "nets" / "weights"
    assert f"network res6v ({weights / 'res6v.pt'})" in first.stderr
    assert f"ownership network res6own ({weights / 'res6own.pt'})" in first.stderr
    # a fresh install compiles, says so first, and caches in the user's folder
    assert COMPILING in first.stderr
    assert first.stderr.index(COMPILING) < first.stderr.index("kernels ready")
    assert list((install.cache_home / "delayed-go" / "numba").rglob("*.nbi"))
    for package in ("engine", "nets"):
        written = [p.name for p in (install.site / package).rglob("*") if p.suffix in (".nbi", ".nbc")]
        assert written == [], f"numba wrote into the installed package: {written[:5]}"

    second = play(install, "--rollouts", "300", "--seed", "1", "--quiet", cwd=tmp_path / "other")
    assert second.returncode == 0, second.stderr[-3000:]
    assert answers(second.stdout)[:5] == got[:5]
    assert COMPILING not in second.stderr          # loaded from the cache, and no word of it


def test_the_installed_command_names_itself_in_errors(install: Install, tmp_path: Path) -> None:
    bad = play(install, "--rollouts", "many", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stdout == ""
    assert "usage: delayed-go" in bad.stderr and "--rollouts" in bad.stderr
