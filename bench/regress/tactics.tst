# Simple tactics.  gogui-regress "python -m engine.gtp --quiet" tactics.tst

# A capturing race: white C6-F6 and black G5-G6 share their last liberty, F5.
# Black must capture first: GNU Go and Pachi both do.  (An earlier version
# of this position, with White's C3 and without Black's C3 and White's E3,
# was no test: GNU Go and Pachi both prefer D3 there, as the engine does.)
loadsgf capture.sgf
1 reg_genmove b
#? [F5]
