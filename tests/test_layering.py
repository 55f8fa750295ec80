"""Import rules between the packages.

* ``gtp`` (the protocol library) uses the standard library only: no engine,
  no nets, no numpy/numba/torch.
* The engine core (board, search, player, features) loads without the
  protocol layer and without the neural-network stack.
* Statically: inside ``engine/`` only the composition root ``engine/gtp.py``
  may import ``gtp`` and ``nets`` (lazily: importing engine.gtp loads
  neither, a runtime check below); no engine module imports ``torch``;
  nothing under ``nets/`` imports ``gtp``.

The runtime checks run in fresh interpreters, since the pytest process has
long since imported everything.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "engine"
NETS = ROOT / "nets"
GTP = ROOT / "gtp"


def _modules_after(code: str) -> dict:
    """Run *code* in a fresh interpreter (cwd: the repository) and return the
    JSON it prints on its last stdout line."""
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, f"child failed:\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------
# runtime


GTP_PROBE = r"""
import json, pkgutil, sys, importlib
before = set(sys.modules)
import gtp
for info in pkgutil.walk_packages(gtp.__path__, "gtp."):
    importlib.import_module(info.name)
new = sorted(set(sys.modules) - before)
roots = sorted({m.split(".")[0] for m in new})
print(json.dumps({"new": new, "roots": roots, "stdlib": sorted(sys.stdlib_module_names)}))
"""


def test_gtp_imports_only_the_standard_library() -> None:
    got = _modules_after(GTP_PROBE)
    roots = set(got["roots"])
    forbidden = {"engine", "nets", "numpy", "numba", "torch", "sgfmill"} & roots
    assert not forbidden, f"importing gtp pulled in {sorted(forbidden)}"
    stdlib = set(got["stdlib"])
    foreign = sorted(r for r in roots if r != "gtp" and r not in stdlib
                     and not r.startswith("_"))  # private C helpers of the stdlib (_io, _thread...)
    assert not foreign, f"gtp imports non-stdlib modules: {foreign}"
    assert "gtp.client" in got["new"] and "gtp.server" in got["new"]


def _engine_core_modules() -> list[str]:
    mods = ["engine.board", "engine.search", "engine.player"]
    if (ENGINE / "features.py").exists():
        mods.append("engine.features")
    return mods


def test_engine_core_leaves_gtp_nets_and_torch_out() -> None:
    mods = _engine_core_modules()
    code = ("import json, sys\n"
            + "".join(f"import {m}\n" for m in mods)
            + "print(json.dumps({'roots': sorted({m.split('.')[0] for m in sys.modules})}))\n")
    roots = set(_modules_after(code)["roots"])
    leaked = {"gtp", "nets", "torch"} & roots
    assert not leaked, f"importing {', '.join(mods)} pulled in {sorted(leaked)}"


def test_engine_gtp_module_imports_gtp_lazily() -> None:
    """engine.gtp is the composition root: importing it (for parse_args) must
    not drag torch or nets in either."""
    code = ("import json, sys\nimport engine.gtp\n"
            "print(json.dumps({'roots': sorted({m.split('.')[0] for m in sys.modules})}))\n")
    roots = set(_modules_after(code)["roots"])
    assert not {"nets", "torch"} & roots


# ---------------------------------------------------------------------------
# static


def _imported_modules(path: Path, package: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in *path*, wherever it
    appears (module level or inside functions); relative imports are resolved
    against *package*; ``importlib.import_module("x")`` and ``__import__("x")``
    with a literal name count too."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                mod = f"{base}.{node.module}" if node.module else base
                if not node.module:  # from . import x, y
                    found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
                    continue
            else:
                mod = node.module or ""
            found.append((node.lineno, mod))
        elif isinstance(node, ast.Call) and node.args:
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", None)
            arg = node.args[0]
            if name in ("import_module", "__import__") and isinstance(arg, ast.Constant) \
                    and isinstance(arg.value, str):
                found.append((node.lineno, arg.value))
    return found


def _package_of(path: Path) -> str:
    """The package a module's relative imports are resolved against."""
    return ".".join(path.relative_to(ROOT).parent.parts)


def _root(mod: str) -> str:
    return mod.split(".")[0]


def test_static_engine_imports() -> None:
    files = sorted(ENGINE.rglob("*.py"))
    assert files, "engine/ has no modules?"
    bad = []
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        for line, mod in _imported_modules(path, _package_of(path)):
            root = _root(mod)
            if root == "torch" or (root == "nets" and rel != "engine/gtp.py"):
                bad.append(f"{rel}:{line} imports {mod}")
            elif rel != "engine/gtp.py" and (root == "gtp" or mod == "engine.gtp"
                                             or mod.startswith("engine.gtp.")):
                bad.append(f"{rel}:{line} imports {mod} (only engine/gtp.py may)")
    assert not bad, "\n".join(bad)


def test_static_nets_imports() -> None:
    files = sorted(NETS.rglob("*.py")) if NETS.is_dir() else []
    if not files:
        pytest.skip("nets/ has no Python modules yet")
    bad = []
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        for line, mod in _imported_modules(path, _package_of(path)):
            if _root(mod) == "gtp" or mod == "engine.gtp" or mod.startswith("engine.gtp."):
                bad.append(f"{rel}:{line} imports {mod}")
    assert not bad, "\n".join(bad)


def test_static_gtp_imports_only_stdlib_or_itself() -> None:
    bad = []
    for path in sorted(GTP.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for line, mod in _imported_modules(path, _package_of(path)):
            root = _root(mod)
            if root != "gtp" and root != "__future__" and root not in sys.stdlib_module_names:
                bad.append(f"{rel}:{line} imports {mod}")
    assert not bad, "\n".join(bad)


def test_import_scanner_sees_lazy_and_relative_imports(tmp_path: Path) -> None:
    """The static checks would be vacuous if the scanner missed imports
    inside functions or relative ones."""
    src = tmp_path / "mod.py"
    src.write_text("import os\n"
                   "from . import sibling\n"
                   "from .gtp import build_registry\n"
                   "def f():\n"
                   "    import torch\n"
                   "    from gtp.vertex import parse_vertex\n"
                   "    import importlib\n"
                   "    importlib.import_module('nets.model')\n")
    mods = sorted(m for _, m in _imported_modules(src, "engine"))
    assert mods == sorted(["os", "engine.sibling", "engine.gtp", "torch", "gtp.vertex",
                           "importlib", "nets.model"])


GPU_MACHINE_PROBE = r"""
import json, sys
sys.modules["sgfmill"] = None          # a lent GPU machine has no sgfmill
import nets.train, nets.evaluator, nets.worker, bench.accuracy, bench.training, bench.inference
print(json.dumps({"ok": True}))
"""


def test_training_and_evaluation_need_no_sgfmill() -> None:
    """What a GPU run uses (training from a game cache, accuracy on cached
    held-out games, the speed benches) imports without sgfmill: only
    reading SGF files needs it."""
    assert _modules_after(GPU_MACHINE_PROBE) == {"ok": True}
