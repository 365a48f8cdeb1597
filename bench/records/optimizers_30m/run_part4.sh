#!/bin/bash
# Part 4 of the 30-minute optimizer benchmark, as run (see rule.txt).
set -e
cd /tmp
common=(--data law1=/work/diag/opt30/law1 --data law2=/work/diag/opt30/law2 --space lambdarank
        --walltime 30m --min-budget 18 --max-budget 144 --eta 2 --parallel 2
        --reference random --cache-dir /work/diag/opt30/cache --out /work/diag/opt30/out)
run() { PYTHONPATH=/work/frozen_o30 /work/main/.venv/bin/python \
          /work/frozen_o30/bench/bench_optimizers.py "${common[@]}" "$@"; }
run --seeds 2 --optimizers model-hb,random,random-hb > /work/diag/opt30/part4A.log 2>&1
run --seeds 3 --optimizers model-hb > /work/diag/opt30/part4B.log 2>&1
