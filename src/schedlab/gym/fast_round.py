"""The fast round: :class:`Round`, the decision point the environment and
:func:`schedlab.gym.as_policy` open by default. It takes the decisions of the plain
reference round (:class:`schedlab.gym.reference.PlainRound`) with less work: fit tests
against the machines no other machine dominates, one pass over the queue per round, and
scalar arithmetic for the usual two-resource pick (see :class:`Round`). What a round is,
and the observation it fills, are in :mod:`schedlab.gym.observe`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from schedlab.cluster.actions import Place
from schedlab.gym.observe import TASK_FEATURES, Observer, RoundBase
from schedlab.policies._phases import machine_order, spread

__all__ = ["Round"]

_F_INSTANCES, _F_WAIT, _F_JOB_WORK = 2, 4, 5    # columns of TASK_FEATURES a round fills
_MAX_CHUNK = 4096       # waiting tasks fit-tested at once while filling the window
_CELLS = 2 ** 16        # (task, machine) pairs per fit test, to bound temporaries
_ALL_CANDIDATES = 32    # up to this many machines, all are candidates (no sort)


class Round(RoundBase):
    """One decision point: a snapshot of the free capacity and the waiting tasks, the
    agent's picks so far and the Place actions they made. It takes the decisions of
    :class:`~schedlab.gym.reference.PlainRound` (the reference: every fit test over every
    machine), found with less work:

    - *Candidate machines.* A task that fits on a machine fits on any machine with at
      least as much free space in every resource (the fit test ``(free + eps) / request
      >= 1`` only grows with ``free``), so "fits somewhere" is tested against the machines
      no other machine dominates (on two resources, the Pareto frontier: a sort), not
      against all of them; on small clusters (up to ``_ALL_CANDIDATES`` machines) every
      machine is a candidate, which costs less than sorting them. Free space only shrinks
      during a round, so the candidates change only when a pick takes room on one of
      them; then they are found again, and the visible tasks are tested again.
    - *One pass over the queue per round.* The visible window is filled in order of
      readiness from a cursor; a task passed over fits nowhere and never will during the
      round, so it is never looked at again. Chunks of the queue are tested at once,
      growing while nothing fits.
    - Free space is kept by resource (``(k, M)``, each resource's row contiguous), and a
      pick of a task requesting two resources (cpu and memory, the usual case) is
      computed on scalars, as fifo's first-fit loop does; the arithmetic is the same.
    """

    def __init__(self, obs: Observer, order: np.ndarray, **snapshot: Any) -> None:
        super().__init__(obs, order, **snapshot)
        # by resource: each row contiguous; free and free_eps stay (M, k) views of them
        self._fT = np.ascontiguousarray(self.free.T)
        self._feT = np.ascontiguousarray(self.free_eps.T)
        self.free, self.free_eps = self._fT.T, self._feT.T
        self._fitting = obs.config.queue_view == "fitting"
        self._first_fit = obs.config.placement == "first-fit"
        self.visible: list[int] = []
        self._fits: list[bool] = []             # per visible slot
        self._cursor = 0
        self._cand: np.ndarray | None = None    # (k, F) free_eps of the candidate machines
        self._cand_set: set[int] | None = set()  # their indices (None: every machine)
        self._no_machine = not len(self.free)
        self._jobs_in_system = obs.jobs_in_system(self.now)   # fixed during a round
        self._fill()

    # -- fit tests (fifo's: (free + eps) / request >= 1 on every requested resource) -----
    def _candidates(self) -> np.ndarray:
        """free_eps of the machines no other machine dominates, as (k, F) (one machine
        of each group of equal rows), or of every machine on a small cluster."""
        if self._cand is None:
            feT = self._feT
            k, M = feT.shape
            if M <= _ALL_CANDIDATES:
                self._cand, self._cand_set = feT, None      # kept current by the picks
                return feT
            if k == 1:
                idx = np.array([int(feT[0].argmax())])
            elif k == 2:
                a, b = feT
                by_a = np.argsort(-a, kind="stable")
                bs = b[by_a]
                # kept: more b than every machine with at least as much a before it
                keep = np.empty(M, dtype=bool)
                keep[0] = True
                np.greater(bs[1:], np.maximum.accumulate(bs[:-1]), out=keep[1:])
                idx = by_a[keep]
            else:                                # superset: one machine per distinct row
                idx = np.unique(self.free_eps, axis=0, return_index=True)[1]
            self._cand = np.ascontiguousarray(feT[:, idx])
            self._cand_set = set(idx.tolist())
        return self._cand

    def _fits_somewhere(self, tasks: np.ndarray) -> np.ndarray:
        """For each task, whether one instance fits on some machine now."""
        n = len(tasks)
        if self._no_machine:
            return np.zeros(n, dtype=bool)
        obs = self.observer
        k = len(obs.cols)
        if not k or not n:
            return np.ones(n, dtype=bool)
        cand = self._candidates()
        F = cand.shape[1]
        req = obs.req[tasks]
        all_pos = obs.every_req_pos or bool(obs.req_all_pos[tasks].all())
        if k == 2 and all_pos and n * F <= _CELLS:     # the usual case, in one expression
            return ((cand[0] / req[:, 0:1] >= 1.0) & (cand[1] / req[:, 1:2] >= 1.0)).any(axis=1)
        step = max(1, _CELLS // F)
        out = np.empty(n, dtype=bool)
        for lo in range(0, n, step):
            r = req[lo:lo + step]
            ok = None
            for c in range(k):
                rc = r[:, c:c + 1]
                if all_pos:
                    col = cand[c] / rc >= 1.0
                else:
                    with np.errstate(divide="ignore", invalid="ignore"):
                        col = (cand[c] / rc >= 1.0) | (rc <= 0)
                ok = col if ok is None else ok & col
            out[lo:lo + step] = ok.any(axis=1)
        return out

    def _fill(self) -> None:
        """Take more waiting tasks, in order of readiness, up to K visible."""
        K = self.observer.config.slots
        order, n = self.order, len(self.order)
        size = 2 * K
        while len(self.visible) < K and self._cursor < n:
            lo = self._cursor
            room = K - len(self.visible)
            if self._fitting:
                # every task past the cursor is untouched (left = pending > 0)
                hi = min(n, lo + size)
                chunk = order[lo:hi]
                hit = np.flatnonzero(self._fits_somewhere(chunk))
                if len(hit) > room:          # the rest is looked at again next time
                    hit = hit[:room]
                    hi = lo + int(hit[-1]) + 1
                self._cursor = hi
                self.visible.extend(chunk[hit].tolist())
                self._fits.extend([True] * len(hit))
                size = min(4 * size, _MAX_CHUNK)
            else:
                hi = min(n, lo + room)
                chunk = order[lo:hi]
                self._cursor = hi
                self.visible.extend(chunk.tolist())
                self._fits.extend(self._fits_somewhere(chunk).tolist())

    @property
    def exhausted(self) -> bool:
        """No visible task can be picked: the round ends."""
        return not self.visible if self._fitting else not any(self._fits)

    def slot_fits(self, slot: int) -> bool:
        return self._fits[slot]

    def mask(self) -> np.ndarray:
        K = self.observer.config.slots
        m = np.zeros(K + 1, dtype=np.int8)
        m[:len(self._fits)] = self._fits
        m[K] = self.may_wait
        return m

    # -- a pick ----------------------------------------------------------------------------
    def _counts(self, t: int, n: int, req: np.ndarray) -> np.ndarray:
        """Instances of task ``t`` that fit on each machine (floored)."""
        feT = self._feT
        if self.observer.req_all_pos[t]:
            return np.floor((feT / req[:, None]).min(axis=0))
        if (req > 0).any():
            pos = req > 0
            return np.floor((feT[pos] / req[pos][:, None]).min(axis=0))
        return np.full(feT.shape[1], float(n))

    def pick(self, slot: int) -> list[Place]:
        """Place the waiting instances of the task in ``slot`` that fit (the placement
        rule's machines in order); return the new actions."""
        obs = self.observer
        t = self.visible[slot]
        n0 = n = self._left(t)
        req = obs.req[t]
        fT, feT = self._fT, self._feT
        new = []
        if len(req) == 2 and obs.req_all_pos[t]:
            # two resources, both requested: scalar arithmetic (fifo's first-fit loop's)
            r0, r1 = req.tolist()
            fit = np.minimum(feT[0] / r0, feT[1] / r1)       # instances that fit, unfloored
            if self._first_fit:
                first = int((fit >= 1.0).argmax())
                room = fit[first]
                chosen = ([(first, n)] if room >= n else [] if not room >= 1.0
                          else spread(np.floor(fit), n))
            else:
                chosen = spread(np.floor(fit), n, self._machine_order(req))
            f0, f1, fe0, fe1 = fT[0], fT[1], feT[0], feT[1]
            for m, k in chosen:
                a, b = r0 * k, r1 * k
                f0[m] -= a
                f1[m] -= b
                fe0[m] -= a
                fe1[m] -= b
                n -= k
                new.append(Place(t, m, k))
        else:
            counts = self._counts(t, n, req)
            chosen = spread(counts, n, None if self._first_fit else self._machine_order(req))
            for m, k in chosen:
                used = req * k
                fT[:, m] -= used
                feT[:, m] -= used
                n -= k
                new.append(Place(t, m, k))
        self._record(t, n0, n, new)
        cand_set = self._cand_set
        stale = bool(chosen) and (cand_set is None or any(m in cand_set for m, _ in chosen))
        # the picked task fits nowhere now (all placed, or every machine is full for it)
        self._fits[slot] = False
        if stale:          # room went from a candidate machine: test the window again
            self._cand = None
            self._fits = self._fits_somewhere(np.asarray(self.visible, dtype=np.int64)).tolist()
            self._fits[slot] = False
        if self._fitting:
            if stale:
                keep = [i for i, f in enumerate(self._fits) if f]
                self.visible = [self.visible[i] for i in keep]
                self._fits = [True] * len(keep)
            else:          # nothing else changed: only the picked task leaves
                del self.visible[slot], self._fits[slot]
            self._fill()
        elif n == 0:
            del self.visible[slot], self._fits[slot]
            self._fill()
        return new

    def _machine_order(self, req: np.ndarray) -> np.ndarray | None:
        obs = self.observer
        return machine_order(obs.config.placement, self.free, obs.capacity[:, obs.cols],
                             req, np.random.default_rng(0))

    # -- the observation -------------------------------------------------------------------
    def observation(self) -> dict[str, np.ndarray]:
        obs = self.observer
        K = obs.config.slots
        tasks = np.zeros((K, len(TASK_FEATURES)), dtype=np.float32)
        if self.visible:
            vis = np.asarray(self.visible, dtype=np.int64)
            n = len(vis)
            tasks[:n] = obs.static[vis]
            left = self.left
            tasks[:n, _F_INSTANCES] = (self.pending[vis] if not left else
                                       [self._left(t) for t in self.visible])
            tasks[:n, _F_WAIT] = self.now - self.ready_time[vis]
            tasks[:n, _F_JOB_WORK] = obs.job_left_work[obs.job[vis]]
        queue = np.array([self.n_waiting_tasks, self.n_waiting_instances,
                          self._jobs_in_system], dtype=np.float32)
        return {"tasks": tasks, "machines": obs.machines_feature(self.free),
                "queue": queue,
                "time": np.array([self.now - obs.first_submit], dtype=np.float32),
                "action_mask": self.mask()}
