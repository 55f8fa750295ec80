"""The engine core: numba board, patterns, playouts, tree search, player.

numba's on-disk cache keys a compiled kernel on the source file that defines
it only, while our kernels inline kernels of other modules (search.py calls
board.py's).  A cache entry could then outlive a change to a module it
inlined.  So the cache lives in a folder named after a hash of all engine
sources: any edit to engine/ starts a fresh cache, and an unchanged checkout
keeps loading compiled kernels in a fraction of a second.
"""

import hashlib
import os
import pathlib
import sys


def _cache_dir() -> str:
    here = pathlib.Path(__file__).resolve().parent
    digest = hashlib.sha1()
    for source in sorted(here.glob("*.py")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    return str(here.parent / ".numba-cache" / digest.hexdigest()[:16])


if "NUMBA_CACHE_DIR" not in os.environ:
    os.environ["NUMBA_CACHE_DIR"] = _cache_dir()
    if "numba" in sys.modules:          # imported before us: make it re-read its settings
        sys.modules["numba"].core.config.reload_config()
