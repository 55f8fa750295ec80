# Simple tactics.  gogui-regress "python -m engine.gtp --quiet" tactics.tst

# The four white stones C6-F6 have one liberty left: Black captures them.
loadsgf capture.sgf
1 reg_genmove b
#? [F5]
