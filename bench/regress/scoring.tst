# Counting a finished game: area (Chinese) scoring with the dead stones
# removed.  gogui-regress "python -m engine.gtp --quiet" scoring.tst

# Black A-D (36 points), white E-J (45); the lone white B6 and black H6 are dead.
loadsgf finished.sgf
1 final_status_list dead
#? [B6 H6]

2 final_score
#? [W\+16\.5]

3 final_status_list seki
#? []
