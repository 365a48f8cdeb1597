from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_runs import build_fake_run

from hpo.errors import UsageError
from hpo.runs.views.history import load_run
from hpo.runs.views.importance import BUDGET_FEATURE, encode_trials, hyperparameter_importance

SPACE_NAMES = {
    "estimate_blend",
    "estimate_blend_select",
    "estimate_weight",
    "estimate_weight_default_collections",
    "extra_trees",
    "feature_fraction",
    "lambdarank_truncation_level",
    "layout_objective",
    "learning_rate",
    "min_data_in_leaf",
    "num_leaves",
    "relative_features",
    "tile_extra_trees",
    "tile_label_levels",
    "tile_objective",
    "tile_truncation_level",
}


@pytest.fixture
def run_dir(tmp_path: Path, tiny_root: Path) -> Path:
    return build_fake_run(tmp_path / "runs", tiny_root)


@pytest.mark.parametrize("method", ["marginal", "permutation"])
def test_importance_ranks_the_hyperparameter_that_drives_the_score(
    run_dir: Path, method: str
) -> None:
    imp = hyperparameter_importance(load_run(run_dir), method=method)
    assert imp.ok
    assert imp.method == method
    assert imp.n_trials == 14
    assert set(imp.values) == SPACE_NAMES | {BUDGET_FEATURE}
    values = list(imp.values.values())
    assert values == sorted(values, reverse=True)
    assert sum(values) == pytest.approx(1.0)
    assert all(v >= 0 for v in values)
    # the fake score depends on learning_rate (strongly), the budget and relative_features
    assert next(iter(imp.values)) == "learning_rate"
    assert imp.values["learning_rate"] > imp.values["num_leaves"]


def test_importance_is_deterministic(run_dir: Path) -> None:
    run = load_run(run_dir)
    assert hyperparameter_importance(run, seed=3) == hyperparameter_importance(run, seed=3)


def test_too_few_trials(run_dir: Path) -> None:
    imp = hyperparameter_importance(load_run(run_dir), min_trials=20)
    assert not imp.ok
    assert imp.values == {}
    assert imp.message == "too few trials for importance (14 successful, need 20)"


def test_too_few_trials_with_no_success(tmp_path: Path, tiny_root: Path) -> None:
    run_dir = build_fake_run(tmp_path / "runs", tiny_root, finished=False)
    (run_dir / "trials.jsonl").write_text("")
    imp = hyperparameter_importance(load_run(run_dir))
    assert imp.message is not None
    assert imp.message.startswith("too few trials")


def test_encoding_uses_the_space_and_budget(run_dir: Path) -> None:
    run = load_run(run_dir)
    X, names = encode_trials(run, run.successful)
    assert names[-1] == BUDGET_FEATURE
    assert set(names[:-1]) == SPACE_NAMES
    assert X.shape == (14, len(SPACE_NAMES) + 1)
    # get_array(): unit scale / choice index; -1 for an inactive one (estimate_weight, blend off)
    assert (((X[:, :-1] >= 0) & (X[:, :-1] <= 1)) | (X[:, :-1] == -1)).all()


def test_encoding_without_space_falls_back(run_dir: Path) -> None:
    campaign = json.loads((run_dir / "campaign.json").read_text())
    del campaign["space"]
    (run_dir / "campaign.json").write_text(json.dumps(campaign))
    run = load_run(run_dir)
    X, names = encode_trials(run, run.successful)
    # without the space, the keys some trial holds (the truncations are inactive in all)
    held = SPACE_NAMES - {"lambdarank_truncation_level", "tile_truncation_level"}
    assert set(names[:-1]) == held
    assert X.shape == (14, len(held) + 1)
    imp = hyperparameter_importance(run)
    assert imp.ok
    assert next(iter(imp.values)) == "learning_rate"


def test_unknown_method(run_dir: Path) -> None:
    with pytest.raises(UsageError, match="unknown importance method 'fanova'"):
        hyperparameter_importance(load_run(run_dir), method="fanova")
