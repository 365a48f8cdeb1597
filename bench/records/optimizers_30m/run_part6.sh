#!/bin/bash
# Part 6 of the 30-minute optimizer benchmark, as run (see rule.txt): the last 8 runs.
set -e
source "$(dirname "$0")/common.sh"  # cd /tmp, `common` and `run`
run --seeds 3 --optimizers random-hb > /work/diag/opt30/part6A.log 2>&1
run --seeds 4 --optimizers model-hb,random,random-hb > /work/diag/opt30/part6B.log 2>&1
