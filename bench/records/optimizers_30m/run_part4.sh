#!/bin/bash
# Part 4 of the 30-minute optimizer benchmark, as run (see rule.txt).
set -e
source "$(dirname "$0")/common.sh"  # cd /tmp, `common` and `run`
run --seeds 2 --optimizers model-hb,random,random-hb > /work/diag/opt30/part4A.log 2>&1
run --seeds 3 --optimizers model-hb > /work/diag/opt30/part4B.log 2>&1
