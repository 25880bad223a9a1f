#!/usr/bin/env bash
# Every GPU check of the workbench in one short session (bench/gpu_check.py says what each step measures).
#
#   bash bench/gpu_check.sh --bundle   # here, with network: pack bench/gpu_bundle/ (wheels and data, ~40 MiB)
#   bash bench/gpu_check.sh            # on the GPU machine (carry bench/gpu_bundle): every step, under 8 minutes
#   bash bench/gpu_check.sh --cpu      # tiny sizes on the CPU, in seconds (tests/test_scoring_scale.py)
#
# Each figure is one JSON line on stdout and in $OUT/gpu_check.jsonl (OUT: a temporary folder if unset). Each step
# is its own process under its own time limit; a step that fails or runs out of time leaves one error line and the
# next one runs. PYTHON picks the interpreter (default python3); BUDGET_S the seconds for all steps (default 460).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
BUNDLE=${GPU_BUNDLE:-$ROOT/bench/gpu_bundle}
if [ "${1:-}" = "--bundle" ]; then
    exec "$PY" bench/gpu_check.py --prepare-bundle "$BUNDLE"
fi
export OUT=${OUT:-$(mktemp -d)}
export WORKBENCH_HOME=${WORKBENCH_HOME:-$(mktemp -d)}  # no batch size remembered from an earlier run
mkdir -p "$OUT"
LOG=$OUT/gpu_check.jsonl
START=$(date +%s)
line() { echo "$1" | tee -a "$LOG"; }

MODE=""
if [ "${1:-}" = "--cpu" ] || ! "$PY" -c "import sys, torch; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
    MODE=--cpu
fi
export PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH}
if [ -d "$BUNDLE/wheels" ]; then
    SITE=${TMPDIR:-/tmp}/workbench-gpu-site
    "$PY" bench/gpu_check.py --install "$BUNDLE" --site "$SITE" || line '{"step": "install", "error": "unpacking the bundle failed"}'
    export PYTHONPATH=$SITE:$PYTHONPATH
fi
ASSETS=$BUNDLE/data
if [ ! -e "$ASSETS/hypernymy_test.parquet" ]; then
    ASSETS=$OUT/assets
    "$PY" bench/gpu_check.py --prepare-data "$ASSETS" || line '{"step": "assets", "error": "no bundle and the data could not be prepared here"}'
fi

BUDGET=${BUDGET_S:-460}
SLACK=1
if [ -n "$MODE" ]; then  # a shared CPU running the tests: the same steps on tiny sizes, slower starts
    BUDGET=${BUDGET_S:-900}
    SLACK=3
fi
# step and its own limit in seconds (on an H100; the --cpu sizes take a few seconds each)
for entry in env:40 mcqa-float32:60 mcqa-bfloat16:60 causal-135m:90 causal-1.7b:90 lm-eval:70 fit:120; do
    step=${entry%%:*}
    limit=$((${entry##*:} * SLACK))
    left=$((BUDGET - ($(date +%s) - START)))
    if [ "$left" -lt 10 ]; then
        line "{\"step\": \"$step\", \"skipped\": \"the ${BUDGET} s budget is spent\"}"
        continue
    fi
    [ "$limit" -gt "$left" ] && limit=$left
    timeout -k 5 "$limit" "$PY" bench/gpu_check.py --step "$step" $MODE --assets "$ASSETS"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        why="exit status $rc"
        [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && why="out of time after ${limit} s"
        line "{\"step\": \"$step\", \"error\": \"$why\"}"
    fi
done
line "{\"step\": \"done\", \"seconds\": $(($(date +%s) - START)), \"out\": \"$LOG\"}"
