"""Stage 4, run folders: the files a campaign writes (settings, trial log, lock, boosters) and
the reading side (history, incumbent, importance, plots).

This stage never imports SMAC: a run can be inspected on a machine that only has the
run folder, and while its campaign is still running.
"""

from __future__ import annotations

from hpo.runs.incumbent import (
    choose_incumbent,
    combine_folds,
    config_key,
)
from hpo.runs.record.boosters import (
    BOOSTERS_DIR,
    BoosterStore,
    booster_key,
    budget_size,
    folder_bytes,
)
from hpo.runs.record.campaign_file import (
    CAMPAIGN_FORMAT,
    FORMAT_1_SETTINGS,
    SUPPORTED_FORMATS,
    CampaignRecord,
    read_campaign_file,
)
from hpo.runs.record.folder import (
    CAMPAIGN_FILE,
    LOCK_FILE,
    RESULT_FILE,
    SMAC_DIR,
    TRIALS_FILE,
    RunLock,
    TrialLog,
    data_fingerprint,
    jsonable,
    lock_is_held,
    package_versions,
    read_json,
    read_lock,
    read_trial_log,
    read_trials,
    run_state,
    trial_key,
    write_json_atomic,
)
from hpo.runs.views.history import (
    DEFAULT_RUNS_DIR,
    RunHistory,
    TrajectoryPoint,
    Trial,
    load_run,
    resolve_run_dir,
)
from hpo.runs.views.importance import (
    BUDGET_FEATURE,
    MIN_TRIALS,
    Importance,
    encode_trials,
    hyperparameter_importance,
)
from hpo.runs.views.nested import (
    RunSummary,
    SubsetRun,
    list_runs,
    load_any,
    load_subset_run,
)
from hpo.runs.views.plots import (
    plot_compare,
    plot_run,
    plot_subsets,
)

__all__ = [
    "BOOSTERS_DIR",
    "CAMPAIGN_FORMAT",
    "CampaignRecord",
    "FORMAT_1_SETTINGS",
    "SUPPORTED_FORMATS",
    "BoosterStore",
    "booster_key",
    "budget_size",
    "choose_incumbent",
    "combine_folds",
    "config_key",
    "folder_bytes",
    "read_campaign_file",
    "BUDGET_FEATURE",
    "CAMPAIGN_FILE",
    "DEFAULT_RUNS_DIR",
    "Importance",
    "LOCK_FILE",
    "MIN_TRIALS",
    "RESULT_FILE",
    "RunHistory",
    "RunLock",
    "RunSummary",
    "SMAC_DIR",
    "SubsetRun",
    "TRIALS_FILE",
    "TrajectoryPoint",
    "Trial",
    "TrialLog",
    "data_fingerprint",
    "encode_trials",
    "hyperparameter_importance",
    "jsonable",
    "list_runs",
    "load_any",
    "load_run",
    "load_subset_run",
    "lock_is_held",
    "package_versions",
    "plot_compare",
    "plot_run",
    "plot_subsets",
    "read_json",
    "read_lock",
    "read_trial_log",
    "read_trials",
    "resolve_run_dir",
    "run_state",
    "trial_key",
    "write_json_atomic",
]
