#!/bin/bash
# Part 5 of the 30-minute optimizer benchmark, as run (see rule.txt): waits for part 4's
# driver to end, then runs law1 and law2 random-s3.
set -e
while pgrep -f run_part4.sh > /dev/null; do sleep 20; done
source "$(dirname "$0")/common.sh"  # cd /tmp, `common` and `run`
run --seeds 3 --optimizers random > /work/diag/opt30/part5.log 2>&1
