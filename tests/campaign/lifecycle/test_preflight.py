"""What every run does before its first trial (hpo.campaign.lifecycle.preflight), for both kinds."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import pytest
from disks import as_left_by, dead_pid
from toy_objectives import TOY_COLLECTIONS, toy_config

from hpo.campaign import CampaignConfig
from hpo.campaign.lifecycle.preflight import (
    Start,
    campaign_record,
    check_saved,
    cut_notes,
    locked_run,
)
from hpo.errors import ConfigError, DataFormatError, TrialCut, UsageError
from hpo.ownership import TEMP_SUFFIX, temp_prefix
from hpo.ranking.scoring.metrics import LAYOUT_METRIC
from hpo.ranking.spaces import load_space
from hpo.runs.record.campaign_file import CampaignRecord
from hpo.runs.record.folder import CAMPAIGN_FILE, read_json, write_json_atomic
from hpo.runs.record.trial import Trial


def _new_run(cfg: CampaignConfig) -> CampaignRecord:
    record = campaign_record(cfg, load_space(cfg.space))
    with locked_run(cfg, Start(), record, lambda: False):
        pass
    return record


def test_start_check_refuses_what_the_folder_does_not_allow(
    data_root: Path, tmp_path: Path
) -> None:
    cfg = toy_config(tmp_path / "runs", data_root)
    with pytest.raises(UsageError, match="exclude each other"):
        Start(resume=True, overwrite=True).check(cfg)
    with pytest.raises(UsageError, match="no campaign 'toy' to resume"):
        Start(resume=True).check(cfg)
    Start().check(cfg)  # a new run in an empty place
    _new_run(cfg)
    with pytest.raises(UsageError, match="already exists.*--resume toy"):
        Start().check(cfg)
    Start(resume=True).check(cfg)
    Start(overwrite=True).check(cfg)


def test_the_record_has_the_settings_space_data_and_what_the_kind_adds(
    data_root: Path, tmp_path: Path
) -> None:
    cfg = toy_config(tmp_path / "runs", data_root)
    record = campaign_record(cfg, load_space(cfg.space), subsets={"a": ("tile:xla",)})
    assert record.config == cfg.to_dict()
    assert record.subsets == {"a": ("tile:xla",)}
    assert record.data_fingerprint
    assert record.space is not None
    assert record.versions
    assert record.layout_metric == LAYOUT_METRIC
    written = record.to_json()  # what campaign.json holds
    assert written["subsets"] == {"a": ["tile:xla"]}
    assert written["config"] == cfg.to_dict()


def test_a_moved_run_resumes_and_a_changed_one_does_not(data_root: Path, tmp_path: Path) -> None:
    cfg = toy_config(tmp_path / "runs", data_root)
    _new_run(cfg)
    moved = tmp_path / "elsewhere" / "renamed"
    moved.parent.mkdir()
    cfg.run_dir.rename(moved)
    here = dataclasses.replace(cfg, runs_dir=moved.parent, name="renamed")
    logged: list[str] = []
    assert check_saved(here, logged.append).config.trials == cfg.trials
    with pytest.raises(ConfigError, match=r"different settings: eta \(saved 3, now 2\)"):
        check_saved(dataclasses.replace(here, eta=2), logged.append)
    (data_root / "npz" / "tile" / "xla" / "train" / "new.npz").write_bytes(b"more data")
    with pytest.raises(ConfigError, match="changed since campaign 'renamed' started"):
        check_saved(here, logged.append)


def test_a_changed_package_version_is_logged_not_refused(data_root: Path, tmp_path: Path) -> None:
    cfg = toy_config(tmp_path / "runs", data_root)
    record = _new_run(cfg).to_json()
    record["versions"] = {**record["versions"], "lightgbm": "0.0.1"}
    write_json_atomic(cfg.run_dir / CAMPAIGN_FILE, record)
    logged: list[str] = []
    check_saved(cfg, logged.append)
    assert len(logged) == 1
    assert "lightgbm" in logged[0]
    assert "0.0.1" in logged[0]


def test_a_run_scored_by_the_older_layout_metric_resumes_and_says_so(
    data_root: Path, tmp_path: Path
) -> None:
    cfg = toy_config(tmp_path / "runs", data_root)
    record = _new_run(cfg).to_json()
    logged: list[str] = []
    check_saved(cfg, logged.append)
    assert logged == []  # made with today's metric: nothing to say
    del record["layout_metric"]  # a run made before the metric scored the predicted order
    write_json_atomic(cfg.run_dir / CAMPAIGN_FILE, record)
    check_saved(cfg, logged.append)
    assert len(logged) == 1
    assert "tau-b of the predicted scores" in logged[0]
    assert LAYOUT_METRIC in logged[0]


def test_a_new_run_refused_before_its_first_trial_leaves_nothing(
    data_root: Path, tmp_path: Path
) -> None:
    cfg = toy_config(tmp_path / "runs", data_root)
    record = campaign_record(cfg, load_space(cfg.space))
    seen: list[bool] = []

    def refused(start: Start, rec: CampaignRecord | None, has_trials: bool) -> None:
        with locked_run(cfg, start, rec, lambda: has_trials):
            seen.append((cfg.run_dir / CAMPAIGN_FILE).is_file())
            raise DataFormatError("bad data")

    with pytest.raises(DataFormatError):
        refused(Start(), record, False)
    assert seen == [True]  # the record was written, then removed again
    assert not cfg.run_dir.exists()
    # with a trial logged, or on a resume, the folder stays
    with pytest.raises(DataFormatError):
        refused(Start(), record, True)
    assert (cfg.run_dir / CAMPAIGN_FILE).is_file()
    with pytest.raises(DataFormatError):
        refused(Start(resume=True), None, False)
    assert (cfg.run_dir / CAMPAIGN_FILE).is_file()


def test_raised_limits_extend_the_campaign_and_are_recorded(
    data_root: Path, tmp_path: Path
) -> None:
    cfg = toy_config(tmp_path / "runs", data_root, walltime=60.0)
    _new_run(cfg)
    logged: list[str] = []
    longer = dataclasses.replace(cfg, trials=20, walltime=120.0)
    assert check_saved(longer, logged.append).config == longer
    assert logged == ["campaign 'toy' extended: trials 12 -> 20, walltime 60 -> 120"]
    record = json.loads((cfg.run_dir / CAMPAIGN_FILE).read_text())
    assert record["config"]["trials"] == 20
    assert record["config"]["name"] == "toy"
    (entry,) = record["extensions"]
    assert (entry["trials"], entry["walltime"], entry["records"]) == ([12, 20], [60.0, 120.0], 0)
    assert check_saved(longer, logged.append).config == longer  # recorded once
    assert len(read_json(cfg.run_dir / "campaign.json")["extensions"]) == 1
    with pytest.raises(UsageError, match=r"--walltime 90: .* already has walltime 120"):
        check_saved(dataclasses.replace(longer, walltime=90.0), logged.append)
    with pytest.raises(UsageError, match=r"--walltime none: .* a resumed campaign's limits"):
        check_saved(dataclasses.replace(longer, walltime=None), logged.append)


def test_the_lock_holder_sweeps_what_a_killed_campaign_was_writing(
    data_root: Path, tmp_path: Path
) -> None:
    """A campaign killed while it wrote left its temporary files (its own, SMAC's, the
    booster store's) for good; the next campaign to hold the folder removes them."""
    cfg = toy_config(tmp_path / "runs", data_root)
    _new_run(cfg)
    run_dir = cfg.run_dir
    names = {
        run_dir: "campaign.json",
        run_dir / "smac" / "0": "runhistory.json",
        run_dir / "boosters": "0123456789abcdef-27.txt",
    }
    left = []
    for folder, name in names.items():
        folder.mkdir(parents=True, exist_ok=True)
        left.append(as_left_by(folder / f"{temp_prefix(folder / name)}1{TEMP_SUFFIX}", dead_pid()))
        left[-1].write_text("half written")
    with locked_run(cfg, Start(resume=True), None, lambda: True):
        pass
    assert [p for p in left if p.exists()] == []
    assert (run_dir / CAMPAIGN_FILE).is_file()


def test_a_changed_data_file_is_named_with_what_changed(data_root: Path, tmp_path: Path) -> None:
    cfg = toy_config(tmp_path / "runs", data_root)
    _new_run(cfg)
    (touched,) = (data_root / "npz" / "tile" / "xla" / "train").glob("*.npz")
    stat = touched.stat()
    os.utime(touched, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    rel = touched.relative_to(data_root).as_posix()
    with pytest.raises(ConfigError, match=rf"{rel} was modified \(same size, mtime now "):
        check_saved(cfg, print)
    touched.write_bytes(touched.read_bytes() + b"x")
    with pytest.raises(ConfigError, match=rf"{rel} changed size \(\d+ -> \d+ bytes\): the data"):
        check_saved(cfg, print)


def test_an_edited_collections_setting_is_named_as_a_setting(
    two_collection_root: Path, tmp_path: Path
) -> None:
    cfg = toy_config(tmp_path / "runs", two_collection_root, collections=TOY_COLLECTIONS)
    _new_run(cfg)
    edited = json.loads((cfg.run_dir / CAMPAIGN_FILE).read_text())
    edited["config"]["collections"] = ["tile:xla"]
    (cfg.run_dir / CAMPAIGN_FILE).write_text(json.dumps(edited))
    with pytest.raises(ConfigError, match=r"different settings: collections \(the run started "):
        check_saved(dataclasses.replace(cfg, collections=("tile:xla",)), print)


def test_a_moved_data_root_resumes_with_data_and_is_recorded(
    data_root: Path, tmp_path: Path
) -> None:
    cfg = toy_config(tmp_path / "runs", data_root)
    _new_run(cfg)
    moved = tmp_path / "moved"
    data_root.rename(moved)
    with pytest.raises(UsageError, match=r"data root of campaign 'toy' is gone; .* --data NEW"):
        check_saved(cfg, print)
    logged: list[str] = []
    resumed = check_saved(dataclasses.replace(cfg, data_root=moved), logged.append)
    assert resumed.config.data_root == moved
    assert logged == [f"data root moved: {data_root} -> {moved} (the same files)"]
    assert json.loads((cfg.run_dir / CAMPAIGN_FILE).read_text())["config"]["data_root"] == str(
        moved
    )
    other = tmp_path / "other"
    shutil.copytree(moved, other)  # a copy (times kept) with one file changed
    (changed,) = (other / "npz" / "tile" / "xla" / "valid").glob("*.npz")
    changed.write_bytes(changed.read_bytes() + b"x")
    with pytest.raises(ConfigError, match="the data changed since campaign 'toy' started"):
        check_saved(dataclasses.replace(cfg, data_root=other), print)


def _failed(trial: int, error: str, duration: float | None = 10.0) -> Trial:
    return Trial(trial, {}, 672.0, "CRASHED", error=error, duration=duration)


def test_cut_notes_name_the_walltime_when_it_cut_every_trial() -> None:
    """A campaign whose trials were all cut by its walltime says so (and how far the longest
    got), instead of leaving the user with "crashed"; once a trial succeeded, or when one
    failed for another reason, it says nothing (that error is what to read)."""
    cut = (
        f"Traceback ...\nhpo.errors.{TrialCut.__name__}: stopped at boosting round 545 of 672: "
        "the campaign's walltime (and its grace) ran out during this trial"
    )
    notes = cut_notes([_failed(1, cut, 264.0), _failed(2, cut, 30.0)])
    assert notes == [
        "every trial was cut by the walltime before it finished (2; trial 1, the longest, "
        "stopped at boosting round 545 of 672 after 264 s): give a longer --walltime or a "
        "lower --max-budget"
    ]
    crash = "Traceback ...\nValueError: bad"
    assert cut_notes([_failed(1, crash)]) == []
    assert cut_notes([_failed(1, cut), _failed(2, crash)]) == []  # the bug first
    assert cut_notes([_failed(1, f"ValueError: {TrialCut.__name__} in a message")]) == []
    done = Trial(3, {}, 672.0, "SUCCESS", score=0.5)
    assert cut_notes([_failed(1, cut), done]) == []
    assert cut_notes([]) == []
    assert (
        "(1; trial 1, the longest, stopped at boosting round 545 of 672):"
        in (cut_notes([_failed(1, cut, None)])[0])
    )
