#!/usr/bin/env bash
# Issue 23, rule_rerun.txt: cold$t (seed t), src$t (seed t+20), pair$t (seed t, --warm-start
# src$t), all with the code frozen at 80d53c8; two campaigns at a time, one thread each.
set -euo pipefail
B=${B:-/work/diag/warm10}; R=$B/runs; C=$B/cache; FROZEN=${FROZEN:-/work/frozen_q}
PY=${PY:-/work/main/.venv/bin/python}
hpo() { PYTHONPATH=$FROZEN "$PY" -c "import sys; from hpo.cli.main import main; sys.exit(main())" "$@"; }
mkdir -p "$B"
[ -d "$B/small1" ] || hpo data synth --out "$B/small1" --scale small --seed 1 > "$B/synth.log" 2>&1
common=(--runs-dir "$R" --space lambdarank_small --cache-dir "$C" --quiet --data "$B/small1"
        --min-budget 42 --max-budget 168 --threads 1)
one() {  # name seed [extra...]
    local name=$1 seed=$2; shift 2
    [ -f "$R/$name/result.json" ] || hpo run --name "$name" --seed "$seed" --walltime 10m \
        "${common[@]}" --overwrite "$@" > "$B/$name.log" 2>&1
}
# the feature cache, warmed outside the timed campaigns
[ -f "$R/warmup/result.json" ] || hpo run --name warmup --seed 0 --trials 2 "${common[@]}" \
    --overwrite > "$B/warmup.log" 2>&1
one cold1 1 & one cold2 2 & wait
one cold3 3 & one cold4 4 & wait
one cold5 5 & one src1 21 & wait
one src2 22 & one src3 23 & wait
one src4 24 & one src5 25 & wait
one pair1 1 --warm-start src1 & one pair2 2 --warm-start src2 & wait
one pair3 3 --warm-start src3 & one pair4 4 --warm-start src4 & wait
one pair5 5 --warm-start src5
