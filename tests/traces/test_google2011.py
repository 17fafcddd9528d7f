"""Google clusterdata-2011 reader: real counts (README figures) and hand-made edge cases."""
from __future__ import annotations

import numpy as np
import pytest

from schedlab.errors import InputError
from schedlab.workload.traces.base import load_trace
from schedlab.workload.traces.google2011_borg import borg_usage_pairs

US = 1_000_000
OFFSET = 600 * US


# ----------------------------------------------------------------------------- real files

@pytest.mark.traces
def test_task_event_counts_match_readme(google_bundle):
    c = google_bundle.report["counts"]
    assert c["task_event_parts"] == 10
    assert c["events"] == 1_827_856
    assert c["events_by_type"] == {"SUBMIT": 675_721, "SCHEDULE": 639_729, "EVICT": 145_550,
                                   "FAIL": 13_267, "FINISH": 230_982, "KILL": 122_562,
                                   "UPDATE_PENDING": 2, "UPDATE_RUNNING": 43}
    assert c["events_by_priority"] == {0: 761_743, 1: 151_261, 2: 763_377, 8: 16_831,
                                       9: 119_209, 10: 2_285, 11: 13_150}
    assert c["events_with_missing_info"] == 291
    assert c["jobs_in_task_events"] == 14_484
    assert c["tasks_in_task_events"] == 464_004
    assert google_bundle.report["rows_skipped"] == 0 or all(
        "never scheduled" in k for k in google_bundle.report["skipped"])


@pytest.mark.traces
def test_task_rebuild_on_real_data(google_bundle):
    c = google_bundle.report["counts"]
    skipped = google_bundle.report["skipped"]
    never = sum(v["rows"] for k, v in skipped.items() if "never scheduled" in k)
    w = google_bundle.workload
    assert len(w) + never == 464_004
    assert c["attempts"] == 639_729  # one per SCHEDULE
    assert c["data_end_s"] == pytest.approx(50_711.946042 - 600)
    assert w["submit_time"].min() == 0.0
    assert w["submit_time"].max() <= c["data_end_s"]
    assert (w["duration"] >= 0).all() and (w["duration"] <= c["data_end_s"]).all()
    assert set(w["priority"].unique()) == {0, 1, 2, 8, 9, 10, 11}
    assert set(w["queue"].unique()) <= {"class0", "class1", "class2", "class3"}
    assert w["cpu"].max() <= 1.0 and w["mem"].max() <= 1.0
    details = google_bundle.extras["tasks"]
    assert len(details) == len(w)
    assert 145_500 < details["evictions"].sum() <= 145_550  # a few hit never-scheduled tasks
    assert c["final_states"]["finished"] > 200_000


@pytest.mark.traces
def test_machine_events_cluster(google_bundle):
    c = google_bundle.report["counts"]
    cluster = google_bundle.cluster
    assert c["machine_events"] == 37_780
    assert cluster.n_machines == 12_583
    assert c["machines_at_time_0"] == 12_477
    classes = c["capacity_classes_at_time_0"]
    assert classes["0.5/0.4995"] == 6_672
    assert classes["0.5/0.2493"] == 3_835
    assert classes["0.5/0.749"] == 992
    assert classes["1/1"] == 788
    assert classes["0.25/0.2498"] == 123
    assert classes["0.5/0.1241"] == 54
    removed = np.isfinite(cluster.remove_time)
    assert removed.any() and (cluster.remove_time[removed] >= cluster.add_time[removed]).all()
    assert set(cluster.attrs.columns) >= {"platform", "capacity_class"}


@pytest.mark.traces
def test_job_events_and_usage(google_bundle, traces_dir):
    c = google_bundle.report["counts"]
    assert c["job_events"] == 39_435
    assert c["jobs_in_job_events"] == 14_489
    assert c["borg_requests_rows"] == 56_046
    assert c["borg_usage_rows"] == 56_047
    assert google_bundle.report["repaired"][
        "borg usage file: duplicated (job_id, task_index), first kept"] == 1
    w = google_bundle.workload
    measured = (w["cpu_used"] != w["cpu"]) | (w["mem_used"] != w["mem"])
    assert c["tasks_with_measured_usage"] == 56_046
    assert measured.sum() > 40_000
    pairs = borg_usage_pairs(traces_dir / "google-2011" / "derived-borg-simulator")
    assert len(pairs) == 56_046
    assert pairs["priority"].value_counts().to_dict() == {9: 48_698, 11: 6_540, 10: 808}
    assert pairs["job_id"].nunique() == 2_517
    ok = pairs["cpu_ratio"].notna()
    assert np.allclose(pairs.loc[ok, "cpu_ratio"],
                       pairs.loc[ok, "cpu_usage"] / pairs.loc[ok, "cpu_request"])


@pytest.mark.traces
def test_derived_borg_machines(traces_dir):
    bundle = load_trace(traces_dir / "google-2011" / "derived-borg-simulator" /
                        "machine-input.txt.gz")
    assert bundle.format == "google2011-borg-machines"
    assert bundle.cluster.n_machines == 12_477


@pytest.mark.traces
def test_single_part_and_glob(traces_dir):
    part = traces_dir / "google-2011" / "task_events" / "part-00001-of-00500.csv.gz"
    one = load_trace(part, machines=False, usage=False, jobs=False)
    pattern = str(traces_dir / "google-2011" / "task_events" / "part-0000[12]-of-00500.csv.gz")
    two = load_trace(pattern, machines=False, usage=False, jobs=False)
    assert two.report["counts"]["task_event_parts"] == 2
    assert two.report["counts"]["events"] > one.report["counts"]["events"]


# ----------------------------------------------------------------------------- fixtures

def _event(t_s, job, task, etype, *, prio=2, sched=1, cpu="0.125", mem="0.0625", disk="0.001",
           missing=""):
    time_us = 0 if t_s == 0 else int(t_s * US) + OFFSET
    return f"{time_us},{missing},{job},{task},,{etype},user,{sched},{prio},{cpu},{mem},{disk},0"


def _part(lines):
    return "\n".join(lines) + "\n"


@pytest.fixture
def small_google(tmp_path):
    events = [
        _event(0, 1, 0, 0), _event(0, 1, 0, 1),                       # snapshot, running
        _event(10, 2, 0, 0), _event(12, 2, 0, 1), _event(20, 2, 0, 2),  # evicted at 20
        _event(21, 2, 0, 0), _event(25, 2, 0, 1), _event(40, 2, 0, 4),  # finished after 15 s
        _event(30, 3, 0, 0, missing="2", cpu="", mem="", disk=""),   # requests missing
        _event(31, 3, 0, 1, cpu="0.25", mem="0.5"), _event(31.5, 3, 0, 8, cpu="0.3", mem="0.5"),
        _event(35, 3, 0, 5, cpu="0.3", mem="0.5"),                     # killed after 4 s
        _event(50, 4, 0, 0), _event(55, 4, 0, 5),                     # killed while pending
        _event(60, 4, 1, 0),                                            # still pending
        _event(100, 5, 0, 0, prio=9, sched=3), _event(100, 5, 0, 1, prio=9, sched=3),
    ]
    root = tmp_path / "google"
    (root / "task_events").mkdir(parents=True)
    import gzip
    events.sort(key=lambda line: int(line.split(",")[0]))  # parts are ordered by time
    with gzip.open(root / "task_events" / "part-00000-of-00500.csv.gz", "wt") as fh:
        fh.write(_part(events[:9]))
    with gzip.open(root / "task_events" / "part-00001-of-00500.csv.gz", "wt") as fh:
        fh.write(_part(events[9:]))
    (root / "machine_events").mkdir()
    machine = _part(["0,1,0,p1,0.5,0.25", "0,2,0,p1,,", f"{OFFSET + 50 * US},2,2,p1,1,1",
                     f"{OFFSET + 70 * US},1,1,p1,,", f"{OFFSET + 80 * US},1,0,p1,0.5,0.25",
                     f"{OFFSET + 90 * US},3,0,p2,1,1", f"{OFFSET + 95 * US},3,1,p2,,"])
    with gzip.open(root / "machine_events" / "part-00000-of-00001.csv.gz", "wt") as fh:
        fh.write(machine)
    return root


def _row(bundle, job, task="0"):
    w = bundle.workload
    return w[(w["job_id"] == str(job)) & (w["task_id"] == task)].iloc[0]


def test_rebuild_attempts_and_durations(small_google):
    bundle = load_trace(small_google)
    assert bundle.format == "google2011"
    c = bundle.report["counts"]
    assert c["events"] == 17 and c["task_event_parts"] == 2
    assert c["data_end_s"] == pytest.approx(100.0)
    snap = _row(bundle, 1)
    assert snap["submit_time"] == 0.0 and snap["duration"] == pytest.approx(100.0)  # censored
    evicted = _row(bundle, 2)
    assert evicted["submit_time"] == pytest.approx(10.0)
    assert evicted["duration"] == pytest.approx(15.0)  # the final attempt
    missing = _row(bundle, 3)
    assert missing["cpu"] == pytest.approx(0.3) and missing["mem"] == pytest.approx(0.5)
    assert missing["duration"] == pytest.approx(4.0)
    prod = _row(bundle, 5)
    assert prod["priority"] == 9 and prod["queue"] == "class3" and prod["duration"] == 0.0
    assert "4" not in set(bundle.workload["job_id"])  # never scheduled: left out...
    skipped = bundle.report["skipped"]
    assert skipped["tasks never scheduled (killed while pending)"]["rows"] == 1  # ...and counted
    assert skipped["tasks never scheduled (still pending at the data end)"]["rows"] == 1
    details = bundle.extras["tasks"].set_index("job_id")
    assert details.loc["2", "attempts"] == 2 and details.loc["2", "evictions"] == 1
    assert details.loc["2", "total_runtime"] == pytest.approx(23.0)
    assert bool(details.loc["1", "censored"]) and bool(details.loc["1", "started_before_trace"])


def test_duration_rules_and_keep_unscheduled(small_google):
    total = load_trace(small_google, duration_rule="total", keep_unscheduled=True)
    assert _row(total, 2)["duration"] == pytest.approx(23.0)
    assert _row(total, 4)["duration"] == 0.0
    longest = load_trace(small_google, duration_rule="longest")
    assert _row(longest, 2)["duration"] == pytest.approx(15.0)
    with pytest.raises(InputError, match="unknown duration rule"):
        load_trace(small_google, duration_rule="median")


def test_small_machine_events(small_google):
    cluster = load_trace(small_google).cluster
    frame = cluster.to_frame().set_index("machine_id")
    assert frame.loc["1", "cpu"] == 0.5 and frame.loc["1", "remove_time"] == np.inf  # re-added
    assert frame.loc["2", "cpu"] == 1.0  # capacity repaired from its UPDATE
    assert frame.loc["3", "add_time"] == pytest.approx(90.0)
    assert frame.loc["3", "remove_time"] == pytest.approx(95.0)
    split = load_trace(small_google, split_episodes=True).cluster
    assert {"1#1", "1#2"} <= set(split.machine_ids)


def _one_part(tmp_path, text):
    d = tmp_path / "task_events"
    d.mkdir(exist_ok=True)
    p = d / "part-00000-of-00500.csv"
    p.write_text(text)
    return p


@pytest.mark.parametrize("bad_line, column, message", [
    ("0,,1,0,,0,u,1,2,0.1,0.1,0.1", "different_machines", "wrong number of fields"),
    ("0,,1,0,,0,u,1,2,0.1,0.1,0.1,0,7", "field 14", "wrong number of fields"),
    ("0,,1,0,,0,u,1,2,abc,0.1,0.1,0", "cpu_request", "is not a number"),
    ("-5,,1,0,,0,u,1,2,0.1,0.1,0.1,0", "time", "impossible time"),
    ("0,,1,0,,9,u,1,2,0.1,0.1,0.1,0", "event_type", "not in 0..8"),
    ("0,,1,0,,0,u,1,12,0.1,0.1,0.1,0", "priority", "not in 0..11"),
    ("0,,,0,,0,u,1,2,0.1,0.1,0.1,0", "job_id", "missing"),
])
def test_bad_rows_name_file_line_and_column(tmp_path, bad_line, column, message):
    good = "0,,1,1,,0,u,1,2,0.1,0.1,0.1,0"
    part = _one_part(tmp_path, f"{good}\n{good.replace(',1,1,', ',1,2,')}\n{bad_line}\n")
    with pytest.raises(InputError) as err:
        load_trace(part, format="google2011")
    assert err.value.file == str(part)
    assert err.value.row == 3
    assert err.value.column == column
    assert message in str(err.value)
    lenient = load_trace(part, format="google2011", lenient=True)
    assert lenient.report["rows_skipped"] >= 1
    assert any(3 in v["first_lines"] for v in lenient.report["skipped"].values())


def test_time_going_backwards_within_a_part(tmp_path):
    lines = [_event(10, 1, 0, 0), _event(12, 1, 0, 1), _event(11, 1, 1, 0)]
    part = _one_part(tmp_path, _part(lines))
    with pytest.raises(InputError, match="impossible time") as err:
        load_trace(part, format="google2011")
    assert err.value.row == 3 and err.value.column == "time"


def test_lenient_counts_each_reason(tmp_path):
    lines = [_event(10, 1, 0, 0), "garbage", _event(12, 1, 0, 1), "1,2,3", _event(13, 1, 0, 4)]
    part = _one_part(tmp_path, _part(lines))
    bundle = load_trace(part, format="google2011", lenient=True)
    assert bundle.report["skipped"]["wrong number of fields"] == {"rows": 2, "first_lines": [2, 4]}
    assert bundle.report["rows_read"] == 5
    assert _row(bundle, 1)["duration"] == pytest.approx(1.0)
