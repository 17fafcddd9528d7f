"""DRS keeps its Python rows of ``free()`` across decisions and reads again only the rows
of machines freed (the trigger's ``freed``) or placed on since. At every decision that
reads them they must equal ``view.free()``, bit for bit, and the run must equal one that
rebuilds every row at every decision: on W-DRS-1 (many completions), on the EC2-like
cluster with machines that fail and join mid-run, and in heartbeat mode (where only the
heartbeating node shows free capacity)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

import schedlab
from schedlab.papers.drs.policy import DrsPolicy
from schedlab.papers.drs.workloads import drs_cluster_1, drs_cluster_2, drs_jobs


class _Checked(DrsPolicy):
    """Compares the kept rows with ``free`` each time they are brought up to date."""

    name = "drs-rows-checked"

    def reset(self, cluster, workload, rng):
        super().reset(cluster, workload, rng)
        self.reads = self.partial = self.heartbeats = 0

    def _read_rows(self, view, free):
        # the documented rule: only stale rows are read unless machines came or went or
        # a heartbeat decides which rows count
        self.partial += (self._rows_whole and not view.trigger.machines_changed
                         and view.heartbeat_machine is None)
        self.heartbeats += view.heartbeat_machine is not None
        super()._read_rows(view, free)
        assert self._free_l == free.tolist()
        assert self._free_l == view.free().tolist()
        self.reads += 1


class _Rebuilt(DrsPolicy):
    """Every row read again at every decision (the behaviour before the kept rows)."""

    name = "drs-rows-rebuilt"

    def _read_rows(self, view, free):
        self._free_l = free.tolist()
        self._stale_rows.clear()


def _cluster(kind: str):
    if kind == "w1":
        return drs_cluster_1(50, seed=7)
    spec = drs_cluster_2(8)
    # two machines fail mid-run (their work requeued), one joins late
    remove = np.array(spec.remove_time, dtype=float)
    add = np.array(spec.add_time, dtype=float)
    remove[[1, 4]] = [0.6, 1.1]
    add[6] = 0.4
    return dataclasses.replace(spec, remove_time=remove, add_time=add)


@pytest.mark.parametrize("kind, rate, heartbeat", [("w1", 50.0, None), ("ec2", 20.0, None),
                                                   ("ec2", 20.0, 0.05)])
def test_kept_rows_equal_free_at_every_read(kind, rate, heartbeat):
    config = {"record_levels": False}
    if heartbeat is not None:
        config["heartbeat_interval"] = heartbeat

    def run(policy):
        return schedlab.simulate(drs_jobs(60, 15, rate=rate, seed=7, size_scale=37.0),
                                 _cluster(kind), policy, seed=7, config=config)

    checked = _Checked(DrsPolicy.Params())
    a = run(checked)
    b = run(_Rebuilt(DrsPolicy.Params()))
    pd.testing.assert_frame_equal(a.attempts.reset_index(drop=True),
                                  b.attempts.reset_index(drop=True))
    assert checked.reads > 50
    if heartbeat is None:
        assert checked.partial > checked.reads // 2      # mostly the kept rows were used
    else:                     # decisions at heartbeats read every row, the others may not
        assert checked.heartbeats > checked.reads // 2
        assert checked.partial <= checked.reads - checked.heartbeats
    if kind == "ec2" and heartbeat is None:
        assert (a.attempts["outcome"] != 0).any()        # the failures requeued work
