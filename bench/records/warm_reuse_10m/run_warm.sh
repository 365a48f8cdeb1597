#!/usr/bin/env bash
# Issue 23: the warm arm of the reuse benchmark: reuse$t (seed t+30) warm-starts from src$t on
# the same root, code frozen at 8fbdc0d (the source's best booster scored again as the
# baseline). reuse1 ran beside src5; then two at a time, one LightGBM thread each.
set -euo pipefail
B=${B:-/work/diag/warm10}; R=$B/runs; C=$B/cache; FROZEN=${FROZEN:-/work/frozen_r}
PY=${PY:-/work/main/.venv/bin/python}
hpo() { PYTHONPATH=$FROZEN "$PY" -c "import sys; from hpo.cli.main import main; sys.exit(main())" "$@"; }
common=(--runs-dir "$R" --space lambdarank_small --cache-dir "$C" --quiet --data "$B/small1"
        --min-budget 42 --max-budget 168 --threads 1)
reuse() { [ -f "$R/reuse$1/result.json" ] || hpo run --name "reuse$1" --seed "$(($1 + 30))" \
            --walltime 10m "${common[@]}" --overwrite --warm-start "src$1" > "$B/reuse$1.log" 2>&1; }
for t in "$@"; do reuse "$t" & done
wait
