#!/usr/bin/env bash
# Issue 23: warm-started against cold campaigns at 10 minutes, on the same data ("run again").
# Per seed t: cold$t (seed t), then again$t (seed t+10, --warm-start cold$t); two campaigns at a
# time, one LightGBM thread each (both arms alike). Code: a frozen worktree (FROZEN).
set -euo pipefail
B=${B:-/work/diag/warm10}; R=$B/runs; C=$B/cache; FROZEN=${FROZEN:-/work/frozen_x}
PY=${PY:-/work/main/.venv/bin/python}
hpo() { PYTHONPATH=$FROZEN "$PY" -c "import sys; from hpo.cli.main import main; sys.exit(main())" "$@"; }
common=(--runs-dir "$R" --space lambdarank_small --cache-dir "$C" --quiet --data "$B/small1"
        --min-budget 42 --max-budget 168 --threads 1)
cold() { [ -f "$R/cold$1/result.json" ] || hpo run --name "cold$1" --seed "$1" --walltime 10m \
           "${common[@]}" --overwrite > "$B/cold$1.log" 2>&1; }
again() { [ -f "$R/again$1/result.json" ] || hpo run --name "again$1" --seed "$(($1 + 10))" \
            --walltime 10m "${common[@]}" --overwrite --warm-start "cold$1" > "$B/again$1.log" 2>&1; }
# the feature cache, warmed outside the timed campaigns
[ -f "$R/warmup/result.json" ] || hpo run --name warmup --seed 0 --trials 2 "${common[@]}" \
    --overwrite > "$B/warmup.log" 2>&1
cold 1 & cold 2 & wait
cold 3 & cold 4 & wait
cold 5 & again 1 & wait
again 2 & again 3 & wait
again 4 & again 5 & wait
