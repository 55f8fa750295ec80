# gomill ringmaster control file: delayed-go against GNU Go 3.8 on 9x9.
#
# How to run, from the repository root (ringmaster writes its files beside
# this one, named after it: engine-vs-gnugo.log (players' stderr, errors),
# .status (to resume), .hist, .report (the results table), .games/*.sgf and
# .cmd; the .gitignore here keeps them out of git):
#
#   . .venv/bin/activate      # so that "python" below is the engine's interpreter
#   ringmaster bench/ringmaster/engine-vs-gnugo.ctl            # play; resumes where it stopped
#   ringmaster bench/ringmaster/engine-vs-gnugo.ctl show       # results so far
#   ringmaster bench/ringmaster/engine-vs-gnugo.ctl stop       # stop after the games in progress
#   ringmaster bench/ringmaster/engine-vs-gnugo.ctl reset      # forget every result
#   ringmaster --max-games 2 --log-gtp bench/ringmaster/engine-vs-gnugo.ctl run
#                             # a smoke test: two games, GTP transcripts in .gtplogs/
#
# gomill 0.8.3 (the current release on PyPI) runs on Python 2.5-2.7 only:
# under Python 3 `pip install gomill` succeeds but `ringmaster` stops with
# a SyntaxError.  Run it from a Python 2.7 environment.  The engine itself
# runs on the project's Python 3 interpreter, whatever runs ringmaster.
#
# The engine is started with its working directory at the repository root
# (cwd is relative to this file's folder), so "python -m engine.gtp" finds
# the engine package.  GNU Go is looked up on PATH (Debian installs it as
# /usr/games/gnugo: put /usr/games on PATH or write the full path).
#
# Scoring: scorer 'players' (gomill's default, written out here) asks each
# player whose is_reliable_scorer is True for final_score when a game ends
# by two passes.  Both are asked: GNU Go with --chinese-rules and our
# engine (area scoring, dead stones judged by its playouts) should agree;
# if they disagree about the winner, ringmaster records the result as
# unknown ("players disagreed") and the SGF keeps both answers.  Set
# is_reliable_scorer=False on 'delayed-go' to let GNU Go alone decide.
# The engine also answers gomill-describe_engine (the report's player
# descriptions), gomill-cpu_time (the "avg cpu" column) and
# gomill-explain_last_move (a comment on each of its moves in the SGF).
#
# The first start of the engine after a change to engine/ compiles its numba
# kernels (30-60 s); ringmaster's start-up check of the players waits for it.

competition_type = 'playoff'

description = """
delayed-go (10000 rollouts a move) against GNU Go 3.8 level 10, 9x9, komi 7.5,
Chinese rules with positional superko, colours alternating.
"""

players = {
    'delayed-go': Player(
        "python -m engine.gtp --rollouts 10000 --quiet",
        cwd="../..",
        is_reliable_scorer=True),

    'gnugo-l10': Player(
        "gnugo --mode gtp --level 10 --chinese-rules --positional-superko",
        is_reliable_scorer=True),
    }

board_size = 9
komi = 7.5
scorer = 'players'
move_limit = 400

record_games = True
stderr_to_log = True

matchups = [
    Matchup('delayed-go', 'gnugo-l10',
            id='dg',
            alternating=True,
            number_of_games=100),
    ]
