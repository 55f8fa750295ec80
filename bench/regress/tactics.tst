# Simple tactics.  gogui-regress "python -m engine.gtp --quiet" tactics.tst

# A capturing race: white C6-F6 and black G5-G6 share their last liberty, F5.
# Black must capture first.  A known failure (2026-11-24): at 10,000
# rollouts the search prefers D3 or E3 (winrate ~0.37) and rates F5 lower.
loadsgf capture.sgf
1 reg_genmove b
#? [F5]*
