# The 30-minute optimizer benchmark's command (see rule.txt), sourced by each part's script:
# `run ARGS` runs the frozen driver with the rule's fixed arguments and a part's ARGS.
cd /tmp
common=(--data law1=/work/diag/opt30/law1 --data law2=/work/diag/opt30/law2 --space lambdarank
        --walltime 30m --min-budget 18 --max-budget 144 --eta 2 --parallel 2
        --reference random --cache-dir /work/diag/opt30/cache --out /work/diag/opt30/out)
run() { PYTHONPATH=/work/frozen_o30 /work/main/.venv/bin/python \
          /work/frozen_o30/bench/bench_optimizers.py "${common[@]}" "$@"; }
