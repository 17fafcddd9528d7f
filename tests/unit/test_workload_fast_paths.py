"""The workload builders' and run summaries' fast paths against their plain references in src.

The parent checks, the Workload CSR arrays, the critical path, the TPC-H duration checks
and the Google task table are compared with their references (``check_parents_reference``,
``edges_reference``, ``critical_path_reference``, ``durations_reference``,
``google_task_table_reference``: pandas' sort and groupby) through
:func:`schedlab.testing.same_decisions.assert_same_function`, error message for error
message and bit for bit. The DRS job table (``drs_jobs_reference``: row by row, draws
through numpy's own methods; the draws themselves: ``test_draws.py``) and the attempts
frame (``attempts_frame_reference``: typed column by column) on fixed cases, bit for bit.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedlab
from schedlab.errors import InputError
from schedlab.metrics import records
from schedlab.papers.drs import workloads as dw
from schedlab.papers.hybrid.google2011 import (
    _google_task_table,
    google_task_table_reference,
)
from schedlab.testing.same_decisions import assert_same_function
from schedlab.workload.job import Workload, critical_path_reference, edges_reference
from schedlab.workload.table import (
    OPTIONAL_COLUMNS,
    WORKLOAD_COLUMNS,
    _check_parents,
    check_parents_reference,
    normalize_workload,
)
from schedlab.workload.traces import tpch


def outcome(fn, *args):
    """What a check did: None, or the error's text and fields."""
    try:
        fn(*args)
    except InputError as exc:
        return str(exc), vars(exc)
    return None


def same_array(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# ------------------------------------------------------------------ random DAG tables
@st.composite
def dag_tables(draw, faults: bool = True) -> pd.DataFrame:
    """Jobs of 1-8 tasks whose parents are earlier tasks of the job; with ``faults`` also
    unknown names, self-references, back edges (cycles), blanks and repeated parents."""
    rows = []
    for j in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 8))
        for t in range(n):
            names = [f"t{p}" for p in draw(st.lists(st.integers(0, max(t - 1, 0)), max_size=3))
                     if p < t]
            if faults:
                extra = draw(st.sampled_from(["", "", "", "", "nope", "self", "back", " ", "dup"]))
                if extra == "nope":
                    names.append("nope")
                elif extra == "self":
                    names.append(f"t{t}")
                elif extra == "back" and t + 1 < n:
                    names.append(f"t{draw(st.integers(t + 1, n - 1))}")
                elif extra == " ":
                    names.insert(0, " ")
                elif extra == "dup" and names:
                    names.append(names[0])
            sep = draw(st.sampled_from([";", " ; "]))
            rows.append((f"j{j}", f"t{t}", draw(st.floats(0.0, 9.0)), sep.join(names)))
    df = pd.DataFrame(rows, columns=["job_id", "task_id", "duration", "parents"])
    order = draw(st.permutations(list(range(len(df)))))
    df = df.iloc[order].reset_index(drop=True)
    df["submit_time"], df["cpu"], df["mem"] = 0.0, 1.0, 1.0
    return df


def _checked(check):
    return lambda df: outcome(check, df.astype({"job_id": str, "task_id": str,
                                                "parents": str}), "w.csv", 2)


def test_parent_checks_name_the_same_first_problem():
    assert_same_function(_checked(_check_parents), _checked(check_parents_reference),
                         dag_tables(), max_examples=150, prepare=lambda df: ((df,), {}))


def _csr(df):
    w = Workload.from_frame(df)
    return w.parent_ptr, w.parent_idx, w.child_ptr, w.child_idx


def test_edges_and_critical_path_match_task_by_task():
    tables = dag_tables(faults=False)
    one = lambda df: ((df,), {})
    assert_same_function(_csr, lambda df: edges_reference(Workload.from_frame(df).frame),
                         tables, max_examples=100, prepare=one)
    assert_same_function(lambda df: Workload.from_frame(df).critical_path(),
                         lambda df: critical_path_reference(Workload.from_frame(df)),
                         tables, max_examples=100, prepare=one)


def test_critical_path_of_a_long_chain_and_of_tasks_without_parents():
    n = 300
    df = pd.DataFrame({"job_id": "j", "task_id": [f"t{i}" for i in range(n)], "submit_time": 0.0,
                       "duration": np.random.default_rng(3).uniform(0, 1, n), "cpu": 1.0,
                       "mem": 1.0, "parents": [""] + [f"t{i - 1}" for i in range(1, n)]})
    w = Workload.from_frame(df)
    assert same_array(w.critical_path(), critical_path_reference(w))
    w.critical_path()[:] = -1.0                     # a caller's copy: the cache is unharmed
    assert same_array(w.critical_path(), critical_path_reference(w))
    flat = Workload.from_frame(df.assign(parents=""))
    assert same_array(flat.critical_path(), critical_path_reference(flat))


# ------------------------------------------------------------------ DRS jobs
@pytest.mark.parametrize("a,m,rate,sizes,scale", [(12, 15, 50.0, "lognormal", 1.0),
                                                   (9, 20, 5.0, "bimodal", 1.0),
                                                   (7, 3, 5, "lognormal", 2.5),
                                                   (5, 1, 1.0, "lognormal", 1.0),
                                                   (6, 2, 2.0, "bimodal", 0.3)])
def test_drs_jobs_match_the_row_by_row_table(a, m, rate, sizes, scale):
    """The job table built column-wise (draws through ``schedlab.draws``, proved equal to
    numpy's in ``test_draws.py``) is the table built row by row."""
    ref = dw.drs_jobs_reference(a, m, rate=rate, seed=4, sizes=sizes, size_scale=scale)
    got = dw.drs_jobs(a, m, rate=rate, seed=4, sizes=sizes, size_scale=scale)
    pd.testing.assert_frame_equal(got, ref, check_exact=True)
    assert got.dtypes.to_dict() == ref.dtypes.to_dict()


# ------------------------------------------------------------------ TPC-H duration checks
class Floaty(float):
    """A float subclass: a number to the check, but not a plain float."""


number_lists = st.lists(st.one_of(
    st.integers(-3, 10**6), st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(), st.just("7"), st.just(None), st.builds(Floaty, st.floats(-5, 5)),
    st.just(10**400)), max_size=6)


_WAVES = st.dictionaries(st.sampled_from(["1", "2", "5"]),
                         st.one_of(number_lists, st.just(3)), max_size=3)


def _durations_outcome(check):
    return lambda waves: outcome(check, {"node": 1, "first_wave": waves}, "first_wave",
                                 "x.json", "jobs[0].stages[0]")


def test_tpch_duration_checks_match():
    assert_same_function(_durations_outcome(tpch._durations),
                         _durations_outcome(tpch.durations_reference), _WAVES,
                         max_examples=400, prepare=lambda waves: ((waves,), {}))


# ------------------------------------------------------------------ tables of a run
def test_attempts_frame_matches_the_frame_typed_column_by_column():
    w = Workload.from_frame(dw.drs_jobs(40, 6, rate=50.0, seed=1))
    res = schedlab.simulate(w, dw.drs_cluster_2(4), "srpt", seed=1)
    outcomes = {row[7] for row in res.sim.records.attempts}
    assert len(outcomes) > 1                       # completions and preemptions
    got = records.attempts_frame(res.sim)
    pd.testing.assert_frame_equal(got, records.attempts_frame_reference(res.sim), check_exact=True)
    res.sim.records.attempts.clear()
    pd.testing.assert_frame_equal(records.attempts_frame(res.sim), records.attempts_frame_reference(res.sim))


@settings(max_examples=100, deadline=None)
@given(st.sets(st.sampled_from([c for c in OPTIONAL_COLUMNS if c != "parents"])),
       st.integers(1, 6))
def test_canonical_table_defaults_and_types(present, n):
    """Each optional column is its default (or its request) when absent, typed as text,
    float64 or int64."""
    rng = np.random.default_rng(n)
    df = pd.DataFrame({"job_id": [f"j{i % 2}" for i in range(n)], "task_id": [f"t{i}" for i in range(n)],
                       "submit_time": rng.uniform(0, 5, n), "duration": rng.uniform(0, 5, n),
                       "cpu": rng.uniform(0, 2, n), "mem": rng.uniform(0, 2, n)})
    for c in present:
        df[c] = ["q"] * n if c in ("stage", "queue") else rng.integers(1, 4, n).astype(float)
    out = normalize_workload(df)
    assert list(out.columns) == list(WORKLOAD_COLUMNS)
    for c, default in OPTIONAL_COLUMNS.items():
        col = out[c]
        if c in ("parents", "stage", "queue"):
            assert pd.api.types.is_string_dtype(col)
            assert list(col) == (["q"] * n if c in present else [default] * n)
        elif c in ("instances", "priority"):
            assert col.dtype == np.int64
            assert list(col) == (list(df[c].astype(np.int64)) if c in present else [default] * n)
        else:
            assert col.dtype == np.float64
            if c in present:
                expect = df[c].to_numpy()
            elif default is None:
                expect = out[c.removesuffix("_used")].to_numpy()
            else:
                expect = np.full(n, default)
            assert same_array(col.to_numpy(), expect.astype(float)) or (
                np.isnan(expect).all() and col.isna().all())


# ------------------------------------------------------------------ Google task table
def _table(frame: pd.DataFrame) -> tuple:
    """A frame as plain values the harness compares exactly: columns, dtypes, arrays."""
    return (list(frame.columns), [str(t) for t in frame.dtypes],
            [frame[c].to_numpy() for c in frame.columns], frame.index.tolist())


_TASK_EVENTS = ["time", "job_id", "task_index", "event_type", "priority", "mem"]


def _events(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=_TASK_EVENTS).astype({"event_type": np.int8,
                                                            "priority": np.int8})


def test_google_task_table_matches_pandas_groupby():
    events = st.lists(st.tuples(st.integers(0, 2 * 10**9), st.integers(0, 3), st.integers(0, 3),
                                st.integers(0, 8), st.integers(0, 11),
                                st.one_of(st.just(float("nan")), st.floats(0, 1))),
                      min_size=1, max_size=60)
    columns = lambda rows: (tuple(_events(rows)[c].to_numpy() for c in _TASK_EVENTS), {})
    assert_same_function(lambda *ev: _table(_google_task_table(*ev)),
                         lambda *ev: _table(google_task_table_reference(*ev)),
                         events, max_examples=60, prepare=columns)
