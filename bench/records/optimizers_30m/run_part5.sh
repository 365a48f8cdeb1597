#!/bin/bash
# Part 5 of the 30-minute optimizer benchmark, as run (see rule.txt): waits for part 4's
# driver to end, then runs law1 and law2 random-s3.
set -e
cd /tmp
while pgrep -f run_part4.sh > /dev/null; do sleep 20; done
common=(--data law1=/work/diag/opt30/law1 --data law2=/work/diag/opt30/law2 --space lambdarank
        --walltime 30m --min-budget 18 --max-budget 144 --eta 2 --parallel 2
        --reference random --cache-dir /work/diag/opt30/cache --out /work/diag/opt30/out)
run() { PYTHONPATH=/work/frozen_o30 /work/main/.venv/bin/python \
          /work/frozen_o30/bench/bench_optimizers.py "${common[@]}" "$@"; }
run --seeds 3 --optimizers random > /work/diag/opt30/part5.log 2>&1
