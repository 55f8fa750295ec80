#!/usr/bin/env bash
# One training run on the lent GPU machine: under 9 minutes, resumable, and
# everything it makes under $OUT (the folder whose files come back).
#
#   OUT=DIR bash nets/gpu_run.sh [DATA]
#
# DATA (default gpu/, ignored by git; name it in the device tool's carry) holds
#   train.npz                  training cache, e.g. python -m nets.data subset
#                              runs/train19.npz gpu/train.npz --games 105000
#                              (26.5 MB: the 64 MiB that travel include the
#                              checkout's tracked files, 37 MB of them)
#   test19.npz test19_kgs.npz  held-out caches (python -m nets.data build
#                              data/test19 gpu/test19.npz --val-fraction 0)
#   labels.npz                 optional: final-ownership labels of train.npz's
#                              games, which a value net's ownership head learns
#                              (python -m nets.ownership pack
#                              runs/own/net-train19.jsonl gpu/labels.npz
#                              --cache gpu/train.npz: its games' only, 1.3 MB)
#   MODEL.pt, MODEL.metrics.jsonl  optional: what the previous run left in $OUT
# The run resumes from DATA/MODEL.pt, else from the committed
# nets/weights/MODEL.pt, else starts afresh: res6v from the policy net
# nets/weights/res6.pt, its new heads at HEAD_LR_SCALE (5) times the learning
# rate, and a deeper value net (res10v) from the default res6v, its added
# blocks starting as the identity; a value net takes two positions a game.
# It trains for MINUTES, evaluates and checkpoints, then
# measures top-1/5/10 on the held-out caches, and a value net's value head by
# game phase (bench.value, value.txt; the caches must keep the games'
# results: build them with this version of nets.data).
#
# $OUT receives (6 files, 7 for a value net): train.log; MODEL.pt, the last checkpoint with its
# optimizer state, or weights only where that exceeds the 16 MiB a file may
# have (the next run then starts a fresh optimizer at the same step and
# schedule, and says so); MODEL.best.pt; MODEL.metrics.jsonl;
# MODEL.curves.png; accuracy.txt; value.txt.
#
# Settings (environment): MODEL (res6v, the default network's), WEIGHTS (the
# folder of committed checkpoints, nets/weights), MINUTES (6), STEPS (60000),
# HALVE_AT (30000,45000,52500), BATCH (512), OPTIMIZER (adam), LR (the
# trainer's default), WORKERS (cores - 1), DEVICE (auto), VAL_POSITIONS (8192
# validation positions), POSITIONS (20000 held-out positions per set), EXTRA
# (more nets.train options).  The dry run on a CPU, with a tiny cache:
# DEVICE=cpu MINUTES=0.2 STEPS=20 BATCH=32 WORKERS=1 POSITIONS=500.
#
# GEN9=K (default 0, none): while the net trains, the machine's spare cores
# play 9x9 games for the 9x9 net, K at a time (python -m bench.generate
# --parallel K --seed GEN9_SEED; give every run its own seed, default 2,
# or it replays the same games).  GNU Go is DATA/gnugo/usr/games/gnugo when
# there (here: apt-get download gnugo; dpkg -x gnugo_*.deb gpu/gnugo), else
# the games are self-play only; sgfmill is installed from DATA/sgfmill-*.whl
# (pip download sgfmill) where the machine lacks it.  The generator stops
# when the training ends; its games come back as $OUT/gen9-sSEED.tar.xz (a
# folder gen9-sSEED of SGF files: unpack it beside the others, e.g. into
# runs/games9/), with its log, generate.log, packed beside that folder (in
# $OUT while it plays; packed, so that a value net's 7 files and the games
# stay inside the 8 files a call brings back).
set -euo pipefail

: "${OUT:?set OUT to the folder that receives the results}"
DATA=${1:-gpu}
MODEL=${MODEL:-res6v}
MINUTES=${MINUTES:-6}
STEPS=${STEPS:-60000}
HALVE_AT=${HALVE_AT:-30000,45000,52500}
BATCH=${BATCH:-512}
OPTIMIZER=${OPTIMIZER:-adam}
WORKERS=${WORKERS:-$(( $(nproc) - 1 ))}
DEVICE=${DEVICE:-auto}
POSITIONS=${POSITIONS:-20000}
LIMIT=$(( 16 * 1024 * 1024 ))
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1

for f in "$DATA/train.npz" "$DATA/test19.npz" "$DATA/test19_kgs.npz"; do
    [ -f "$f" ] || { echo "error: $f is missing (see the top of $0)" >&2; exit 2; }
done
mkdir -p "$OUT"
run=$(mktemp -d)
resume=()
for ck in "$DATA/$MODEL.pt" "${WEIGHTS:-nets/weights}/$MODEL.pt"; do
    if [ -f "$ck" ]; then resume=(--resume-from "$ck"); break; fi
done
value=$($PY -c "from nets.models import MODELS; print(MODELS.get('$MODEL', {}).get('arch') == 'res_value')")
if [ ${#resume[@]} -eq 0 ] && [ "$value" = True ]; then
    if [ "$MODEL" = res6v ]; then
        resume=(--init-from nets/weights/res6.pt --head-lr-scale "${HEAD_LR_SCALE:-5}" \
                --positions-per-game 2)
    else
        resume=(--init-from nets/weights/res6v.pt --positions-per-game 2)
    fi
fi
labels=()
if [ "$value" = True ] && [ -f "$DATA/labels.npz" ]; then labels=(--labels "$DATA/labels.npz"); fi

gen_pid=
if [ "${GEN9:-0}" -gt 0 ]; then
    GEN9_SEED=${GEN9_SEED:-2}
    games="$run/gen9-s$GEN9_SEED"
    mkdir -p "$games"
    $PY -c "import sgfmill" 2>/dev/null || $PY -m pip install -q --no-index "$DATA"/sgfmill-*.whl
    opponent=(--gnugo-every 0)
    if [ -x "$DATA/gnugo/usr/games/gnugo" ]; then opponent=(--gnugo "$DATA/gnugo/usr/games/gnugo"); fi
    $PY -m bench.generate "$games" --games 100000 --parallel "$GEN9" --seed "$GEN9_SEED" \
        "${opponent[@]}" > "$OUT/generate.log" 2>&1 &
    gen_pid=$!
fi

{
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') $(git rev-parse --short HEAD 2>/dev/null || echo '?')" \
         "${resume[*]:-(fresh run)}"
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null || true
    echo "cores: $(nproc)"
    $PY -m nets.train --data "$DATA/train.npz" --model "$MODEL" --out "$run" \
        "${resume[@]}" "${labels[@]}" --minutes "$MINUTES" --steps "$STEPS" \
        --halve-at "$HALVE_AT" \
        --batch "$BATCH" --optimizer "$OPTIMIZER" ${LR:+--lr "$LR"} --workers "$WORKERS" \
        --device "$DEVICE" --eval-every 2000 --val-positions "${VAL_POSITIONS:-8192}" \
        --log-every 200 ${EXTRA:-}
} 2>&1 | tee "$OUT/train.log"

if [ "$(stat -c %s "$run/last.pt")" -le "$LIMIT" ]; then
    cp "$run/last.pt" "$OUT/$MODEL.pt"
else
    $PY -m nets.checkpoint weights-only "$run/last.pt" "$OUT/$MODEL.pt" | tee -a "$OUT/train.log"
    echo "last.pt with its optimizer state exceeds 16 MiB: $MODEL.pt holds the weights only" \
        | tee -a "$OUT/train.log"
fi
if [ -n "$gen_pid" ]; then
    kill -TERM "$gen_pid" 2>/dev/null || true
    wait "$gen_pid" || true
    rm -rf "$games"/.game-*
    mv "$OUT/generate.log" "$run/generate.log"
    tar -cJf "$OUT/gen9-s$GEN9_SEED.tar.xz" -C "$run" "gen9-s$GEN9_SEED" generate.log
    echo "gen9-s$GEN9_SEED.tar.xz: $(ls "$games" | wc -l) games" | tee -a "$OUT/train.log"
fi
cp "$run/best.pt" "$OUT/$MODEL.best.pt"
cp "$run/metrics.jsonl" "$OUT/$MODEL.metrics.jsonl"
[ -f "$run/curves.png" ] && cp "$run/curves.png" "$OUT/$MODEL.curves.png"

for set in test19 test19_kgs; do
    $PY -m bench.accuracy "$OUT/$MODEL.best.pt" "$DATA/$set.npz" --positions "$POSITIONS" \
        --threads "$(nproc)"
done 2>&1 | tee "$OUT/accuracy.txt"
if [ "$value" = True ]; then
    $PY -m bench.value "$OUT/$MODEL.best.pt" "$DATA/test19.npz" "$DATA/test19_kgs.npz" \
        --positions "$POSITIONS" --rollout-positions 0 --threads "$(nproc)" 2>&1 \
        | tee "$OUT/value.txt"
fi
rm -rf "$run"
