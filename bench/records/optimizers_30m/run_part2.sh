#!/bin/bash
# Part 2 of the 30-minute optimizer benchmark, as run (see rule.txt).
set -e
source "$(dirname "$0")/common.sh"  # cd /tmp, `common` and `run`
run --seeds 0 --optimizers model-hb,random,random-hb > /work/diag/opt30/part2A.log 2>&1
run --seeds 1 --optimizers model-hb,random > /work/diag/opt30/part2B.log 2>&1
