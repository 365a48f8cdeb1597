#!/usr/bin/env bash
# Issue 23: pair$t (seed t, the cold arm's seed) warm-starts from src$t; code frozen at 335b931.
set -euo pipefail
B=${B:-/work/diag/warm10}; R=$B/runs; C=$B/cache; FROZEN=${FROZEN:-/work/frozen_p}
PY=${PY:-/work/main/.venv/bin/python}
hpo() { PYTHONPATH=$FROZEN "$PY" -c "import sys; from hpo.cli.main import main; sys.exit(main())" "$@"; }
common=(--runs-dir "$R" --space lambdarank_small --cache-dir "$C" --quiet --data "$B/small1"
        --min-budget 42 --max-budget 168 --threads 1)
pair() { [ -f "$R/pair$1/result.json" ] || hpo run --name "pair$1" --seed "$1" \
           --walltime 10m "${common[@]}" --overwrite --warm-start "src$1" > "$B/pair$1.log" 2>&1; }
pair 1 & pair 2 & wait
pair 3 & pair 4 & wait
pair 5
