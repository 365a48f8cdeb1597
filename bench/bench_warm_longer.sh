#!/usr/bin/env bash
# Issue 23, "run again, simply for longer": a campaign warm-started from an earlier run on the
# same data, against one cold campaign of their total time. Usage:
#   hpo data synth --out $B/small1 --scale small --seed 1
#   bash bench/bench_warm_longer.sh $B 2m 4m "1 2 3 4 5"
# Per seed t: the source cold$t (WALL, seed t; a finished one in $B/runs is kept, e.g. from
# bench_ensemble_warm.sh: it must have been run with the same WALL and budgets, which the
# report checks for the walltime), then again$t (WALL, seed t+10, --warm-start cold$t) and long$t
# (LONG, seed t: the source's own campaign, run on instead of stopped and warm-started).
# Then ext$t: a copy of cold$t extended to LONG (hpo run --resume ext$t --walltime LONG), the
# same campaign continued from its SMAC state. EXTEND_ONLY=1 skips again$t.
# Budgets: MIN_BUDGET and MAX_BUDGET from the environment (default 42 and 168).
# Report of the extension: python bench/bench_extend_report.py $B --seeds 1 2 3 4 5 --png F
# Report: python bench/bench_warm_report.py $B --seeds 0 1 2 3 4 --skip-ensemble --warm again \
#   --long long --png $B/again.png     (seeds s of the report are runs t = s + 1)
set -euo pipefail
B=$1; WALL=${2:-2m}; LONG=${3:-4m}; SEEDS=${4:-"1 2 3 4 5"}
R=$B/runs; C=$B/cache
common=(--runs-dir "$R" --space lambdarank_small --cache-dir "$C" --quiet --data "$B/small1"
        --min-budget "${MIN_BUDGET:-42}" --max-budget "${MAX_BUDGET:-168}")
for t in $SEEDS; do
  if [ ! -f "$R/cold$t/result.json" ]; then   # written when a campaign ends
    hpo run --name "cold$t" --seed "$t" --walltime "$WALL" "${common[@]}" --overwrite \
      > "$B/cold$t.log"
  fi
  if [ -z "${EXTEND_ONLY:-}" ]; then
    hpo run --name "again$t" --seed "$((t + 10))" --walltime "$WALL" "${common[@]}" --overwrite \
      --warm-start "cold$t" > "$B/again$t.log"
  fi
  # the source itself, extended to LONG (a copy, so cold$t stays the 2-minute source)
  rm -rf "$R/ext$t" && cp -r "$R/cold$t" "$R/ext$t"
  hpo run --runs-dir "$R" --resume "ext$t" --walltime "$LONG" --quiet > "$B/ext$t.log"
  hpo run --name "long$t" --seed "$t" --walltime "$LONG" "${common[@]}" --overwrite \
    > "$B/long$t.log"
done
