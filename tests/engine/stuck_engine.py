"""``python -m engine.gtp`` whose search kernel never returns once the
engine has warmed up: a stand-in for a search thread caught in a bug, for
the exit tests of tests/engine/test_robustness.py.

    python tests/engine/stuck_engine.py [engine options]
"""

import os
import sys
import time

import engine.player as player
import engine.search as search

_simulate = search.simulate
_warm_up = player.Player.warm_up
_stuck = False


def simulate(*args):
    while _stuck:            # a kernel that never returns
        time.sleep(0.001)
    return _simulate(*args)


def warm_up(self):
    global _stuck
    _warm_up(self)
    _stuck = True


search.simulate = simulate
player.Player.warm_up = warm_up

from engine.gtp import main  # noqa: E402 - after the patches

code = main(sys.argv[1:])
sys.stdout.flush()
os._exit(code)
