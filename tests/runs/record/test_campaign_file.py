"""campaign.json formats: the check on load, the reading of format-1 runs, and updates."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from fake_runs import build_fake_run

from hpo.errors import ConfigError
from hpo.runs.record.campaign_file import (
    CAMPAIGN_FORMAT,
    FORMAT_1_SETTINGS,
    CampaignRecord,
    Resume,
    SmacSetup,
    read_campaign_file,
    update_campaign_file,
)
from hpo.runs.views.history import load_run

NEW_KEYS = (
    "features",
    "fixed_rounds",
    "fast_bias",
    "train_configs",
    "valid_configs",
    "keep_fastest",
    "n_init",
    "min_trials",
    "threads",
)


def _rewrite(run_dir: Path, **changes: object) -> Path:
    path = run_dir / "campaign.json"
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("found", [3, 0, "2", None])
def test_unknown_format_is_one_line(tmp_path: Path, tiny_root: Path, found: object) -> None:
    from hpo.campaign import read_campaign

    path = _rewrite(build_fake_run(tmp_path / "runs", tiny_root), format=found)
    message = (
        rf"^{re.escape(str(path))}: campaign format {re.escape(repr(found))} is not supported "
        r"by this hpo \(it reads formats 1, 2\)"
    )
    for read in (load_run, read_campaign):
        with pytest.raises(ConfigError, match=message) as exc:
            read(path.parent)
        assert "\n" not in str(exc.value)


def test_format_1_run_reads_with_the_settings_of_its_time(tmp_path: Path, tiny_root: Path) -> None:
    from hpo.campaign import read_campaign
    from hpo.features import FeatureSpec

    run_dir = build_fake_run(tmp_path / "runs", tiny_root)
    data = json.loads((run_dir / "campaign.json").read_text())
    old = {k: v for k, v in data["config"].items() if k not in NEW_KEYS}
    _rewrite(run_dir, format=1, config=old)
    run = load_run(run_dir)
    assert run.record.format == 1
    assert {k: run.record.config[k] for k in NEW_KEYS} == FORMAT_1_SETTINGS
    assert run.settings.features == FeatureSpec(relative=True, graph_descriptor=True,
                                                producer_hops=4, version=1)  # fmt: skip
    cfg = read_campaign(run_dir).config
    assert (cfg.fixed_rounds, cfg.fast_bias) == (200, 2.0)
    assert cfg.features == run.settings.features
    inc = run.incumbent
    assert inc is not None
    assert inc.budget == 45.0


def test_new_runs_record_what_defines_the_model(tmp_path: Path, tiny_root: Path) -> None:
    run = load_run(build_fake_run(tmp_path / "runs", tiny_root))
    assert run.record.format == CAMPAIGN_FORMAT
    assert run.settings.features.relative is True
    assert run.settings.fixed_rounds == 200
    assert run.settings.fast_bias == 2.0


def test_an_update_sets_its_keys_and_keeps_the_file_as_written(tmp_path: Path) -> None:
    # a format-1 file stays format 1 with its own settings: an update never upgrades it
    written = {"format": 1, "config": {"seed": 3}, "resumes": [{"at": 1.0, "records": 2}]}
    path = tmp_path / "campaign.json"
    path.write_text(json.dumps(written))
    record = update_campaign_file(
        tmp_path,
        lambda r: dataclasses.replace(
            r.with_resume(Resume(at=2.0, records=5)), smac=SmacSetup({"a": 1})
        ),
    )
    resumes = [{"at": 1.0, "records": 2}, {"at": 2.0, "records": 5}]
    expected = {**written, "resumes": resumes, "smac": {"a": 1}}
    assert record.to_json() == expected
    assert json.loads(path.read_text()) == expected
    assert record.config["cv"] == 0  # read with what the file lacks


def test_an_update_that_changes_nothing_does_not_write(tmp_path: Path) -> None:
    path = tmp_path / "campaign.json"
    path.write_text(json.dumps({"format": 2, "config": {}, "smac": {"a": 1}}))
    before = path.stat().st_ino, path.stat().st_mtime_ns
    update_campaign_file(tmp_path, lambda r: dataclasses.replace(r, smac=SmacSetup({"a": 1})))
    assert (path.stat().st_ino, path.stat().st_mtime_ns) == before  # atomic writes replace
    update_campaign_file(tmp_path, lambda r: dataclasses.replace(r, smac=SmacSetup({"a": 2})))
    assert json.loads(path.read_text())["smac"] == {"a": 2}


def test_an_update_of_a_file_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    (tmp_path / "campaign.json").write_text("[1, 2]")
    with pytest.raises(ConfigError, match=r"campaign\.json: expected a JSON object"):
        update_campaign_file(tmp_path, lambda r: r)


def test_keys_the_record_does_not_know_are_written_back(tmp_path: Path) -> None:
    written = {"format": 2, "config": {"seed": 3}, "a_later_key": [1, {"b": 2}]}
    (tmp_path / "campaign.json").write_text(json.dumps(written))
    record = update_campaign_file(tmp_path, lambda r: r.with_resume(Resume(at=1.0, records=0)))
    assert record.other == {"a_later_key": [1, {"b": 2}]}
    assert json.loads((tmp_path / "campaign.json").read_text())["a_later_key"] == [1, {"b": 2}]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("warm_start", {"baseline": [1]}, "key 'warm_start': expected baseline as an object"),
        ("warm_start", {"baseline": {}, "reuse": {"boosters": {}, "size": "12"}}, "malformed"),
        ("local_design", {"a": 1}, "key 'local_design': expected a list of configurations"),
        ("subsets", ["tile"], "key 'subsets': expected {subset: \\[collections\\]}"),
        ("resumes", [3], "key 'resumes': expected a JSON object"),
        ("extensions", [{"trials": [1]}], "key 'extensions': expected trials and walltime"),
    ],
)
def test_a_malformed_part_is_one_line_naming_the_file_and_key(
    tmp_path: Path, key: str, value: object, message: str
) -> None:
    path = tmp_path / "campaign.json"
    path.write_text(json.dumps({"format": 2, "config": {}, key: value}))
    with pytest.raises(ConfigError, match=f"^{re.escape(str(path))}: .*{message}"):
        read_campaign_file(path)


def test_the_record_of_a_real_run_is_written_as_it_was_read(
    tmp_path: Path, tiny_root: Path
) -> None:
    run_dir = build_fake_run(tmp_path / "runs", tiny_root)
    data = json.loads((run_dir / "campaign.json").read_text())
    record = CampaignRecord.from_json(data)
    assert CampaignRecord.from_json(record.to_json()) == record
    assert record.kind == "single"
    assert record.baseline_origin == "default configuration"
