# When the engine passes.  Run from this folder (gogui-regress does):
#   gogui-regress "python -m engine.gtp --quiet" passing.tst

# A 9x9 game against Pachi, White to play before move 66: the engine
# passed here with F4 open and its upper-left group unsettled, and lost.
loadsgf ../../tests/data/sgf/pass-at-move-66-vs-pachi-9x9.sgf 66
1 reg_genmove w
#? [!pass]

# Black has passed on a finished board that White wins: White passes back.
loadsgf finished.sgf
2 reg_genmove w
#? [pass]
