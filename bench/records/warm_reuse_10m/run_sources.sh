#!/usr/bin/env bash
# Issue 23: the sources of the reuse benchmark: 10-minute cold campaigns src1-5 (seed t+20) on
# warm_10m's root, code frozen at 163823c. Two at a time, one LightGBM thread each.
set -euo pipefail
B=${B:-/work/diag/warm10}; R=$B/runs; C=$B/cache; FROZEN=${FROZEN:-/work/frozen_s}
PY=${PY:-/work/main/.venv/bin/python}
hpo() { PYTHONPATH=$FROZEN "$PY" -c "import sys; from hpo.cli.main import main; sys.exit(main())" "$@"; }
common=(--runs-dir "$R" --space lambdarank_small --cache-dir "$C" --quiet --data "$B/small1"
        --min-budget 42 --max-budget 168 --threads 1)
src() { [ -f "$R/src$1/result.json" ] || hpo run --name "src$1" --seed "$(($1 + 20))" \
          --walltime 10m "${common[@]}" --overwrite > "$B/src$1.log" 2>&1; }
src 1 & src 2 & wait
src 3 & src 4 & wait
src 5
