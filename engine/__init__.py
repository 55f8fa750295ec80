"""The engine core: numba board, patterns, playouts, tree search, player.

numba's on-disk cache keys a compiled kernel on the source file that defines
it only, while our kernels inline kernels of other modules (search.py calls
board.py's).  A cache entry could then outlive a change to a module it
inlined.  So the cache lives in a folder named after a hash of all engine
sources: any edit to engine/ starts a fresh cache, and an unchanged version
keeps loading compiled kernels in a fraction of a second.

That folder is ``.numba-cache/`` beside the packages in a source checkout
(ignored by git), and the user's cache folder, ``$XDG_CACHE_HOME/delayed-go/numba``
(``~/.cache/delayed-go/numba``), for an installed package, whose folder may be
read-only and should not collect files its installer does not know of.  A
NUMBA_CACHE_DIR set by the user wins.  It is set here, before numba is
imported: numba reads it once, at its import.
"""

import hashlib
import os
import pathlib
import sys


def _source_digest() -> str:
    here = pathlib.Path(__file__).resolve().parent
    digest = hashlib.sha1()
    for source in sorted(here.glob("*.py")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


SOURCE_DIGEST = _source_digest()
"""Names this version of the engine's kernels (see the module's docstring)."""


def _cache_dir() -> str:
    root = pathlib.Path(__file__).resolve().parent.parent
    if (root / "pyproject.toml").is_file() and os.access(root, os.W_OK):     # a source checkout
        base = root / ".numba-cache"
    else:                                                                   # an installed package
        user_cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                      ".cache")
        base = pathlib.Path(user_cache) / "delayed-go" / "numba"
    return str(base / SOURCE_DIGEST)


if "NUMBA_CACHE_DIR" not in os.environ:
    os.environ["NUMBA_CACHE_DIR"] = _cache_dir()
    if "numba" in sys.modules:          # imported before us: make it re-read its settings
        sys.modules["numba"].core.config.reload_config()
