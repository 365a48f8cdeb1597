#!/usr/bin/env bash
# Issue 23, scaled down: --ensemble 3 against the incumbent on unseen graphs, and a
# warm-started campaign against a cold one of equal walltime. Usage:
#   hpo data synth --out $B/small0 --scale small --seed 0
#   hpo data synth --out $B/small1 --scale small --seed 1
#   bash bench/bench_ensemble_warm.sh $B 3m "0 1"
# The budgets (boosting rounds) are MIN_BUDGET and MAX_BUDGET from the environment (default
# 42 and 168). WARM_ONLY=1 keeps the campaigns e$s, their exports and evaluations found in $B
# and runs only the warm and cold campaigns (to measure a change of the warm start alone).
# Report: python bench/bench_warm_report.py $B --seeds 0 1 --png $B/warm.png
set -euo pipefail
B=$1; WALL=${2:-3m}; SEEDS=${3:-"0 1"}
R=$B/runs; M=$B/models; C=$B/cache
common=(--runs-dir "$R" --space lambdarank_small --walltime "$WALL" --cache-dir "$C" --quiet
        --min-budget "${MIN_BUDGET:-42}" --max-budget "${MAX_BUDGET:-168}")
for s in $SEEDS; do
  if [ "${WARM_ONLY:-0}" = 1 ]; then
    [ -f "$R/e$s/trials.jsonl" ] || { echo "WARM_ONLY: no campaign $R/e$s" >&2; exit 2; }
  else
  # selection on small0; unseen: every labeled graph (train and valid) of small1
  hpo run --data "$B/small0" --name "e$s" --seed "$s" "${common[@]}" --overwrite > "$B/e$s.log"
  hpo export "e$s" --runs-dir "$R" --out "$M/e$s" --jobs 1 > "$B/x$s.log"
  # the default rule (members within 0.01 of the incumbent on valid; refused when none is),
  # and the 3 best whatever their score
  hpo export "e$s" --runs-dir "$R" --out "$M/e$s-ens3" --ensemble 3 --jobs 1 >> "$B/x$s.log" \
    2>&1 || rm -rf "$M/e$s-ens3"
  hpo export "e$s" --runs-dir "$R" --out "$M/e$s-ens3all" --ensemble 3 --ensemble-within inf \
    --jobs 1 >> "$B/x$s.log"
  for m in "e$s" "e$s-ens3" "e$s-ens3all"; do
    [ -d "$M/$m" ] || continue
    for split in train valid; do
      hpo evaluate --model "$M/$m" --data "$B/small1" --split "$split" --json \
        --cache-dir "$C" > "$B/eval-$m-$split.json"
    done
  done
  fi
  # warm start: a campaign on small1 seeded by e$s (tuned on small0) against a cold one, both
  # with another seed than e$s (with the same seed the cold run samples e$s's own initial
  # design, the very configurations the warm run is seeded with)
  t=$((s + 1))
  hpo run --data "$B/small1" --name "cold$t" --seed "$t" "${common[@]}" --overwrite > "$B/cold$t.log"
  hpo run --data "$B/small1" --name "warm$t" --seed "$t" "${common[@]}" --overwrite \
    --warm-start "e$s" > "$B/warm$t.log"
  hpo runs show "cold$t" --runs-dir "$R" --json > "$B/cold$t.json"
  hpo runs show "warm$t" --runs-dir "$R" --json > "$B/warm$t.json"
done
