"""Tetris multi-resource packing (baseline)."""
from __future__ import annotations

import numpy as np

from schedlab.cluster.actions import Place
from schedlab.cluster.spec import FIT_TOLERANCE
from schedlab.policies._phases import active_columns
from schedlab.policies.base import Policy, PolicyParams
from schedlab.policies.registry import register


def _fit_matrix(free: np.ndarray, req: np.ndarray) -> np.ndarray:
    """(K, M): how many instances of each request fit on each machine."""
    with np.errstate(divide="ignore", invalid="ignore"):
        per = np.where(req[:, None, :] > 0,
                       np.floor((free[None, :, :] + FIT_TOLERANCE) / np.where(req > 0, req, 1.0)[:, None, :]),
                       np.inf)
    out = per.min(axis=2)
    out = np.where(np.isfinite(out), out, 1 << 40)
    return np.maximum(out, 0).astype(np.int64)


@register
class TetrisPolicy(Policy):
    """Tetris packing (Grandl et al., SIGCOMM 2014).

    Assumptions
        Requests and free capacity are normalised by machine capacity; only resources with
        finite capacity count.
    Decision
        Among the first ``lookahead`` pending tasks, pick the (task, machine) pair with the
        highest score ``alignment + srpt_weight * srpt``, where alignment is the dot product
        of the task's normalised request and the machine's normalised free vector, and srpt
        favours jobs with little remaining work (scaled to the mean alignment, as the paper
        combines the two with a weight ε). Place as many instances as fit there; repeat.
        The paper's fairness knob is represented by ``lookahead`` (a smaller window is
        fairer to the head of the queue).
    Complexity
        O(K·M) per placement for K = lookahead.
    Reference
        R. Grandl et al., "Multi-resource packing for cluster schedulers", SIGCOMM 2014.
    """

    name = "tetris"
    description = "Tetris: multi-resource packing by request/free alignment plus SRPT"

    class Params(PolicyParams):
        #: waiting tasks, from the head of the FIFO queue, considered at each placement
        #: (smaller: fairer to the head of the queue; the paper's fairness knob)
        lookahead: int = 64
        #: weight of the remaining-work (SRPT) term against the alignment score (the
        #: paper's epsilon); 0 packs by alignment alone
        srpt_weight: float = 0.5

    def decide(self, view):
        order = view.pending_tasks()
        if not len(order):
            return ()
        w = self.workload
        cand = order[: self.params.lookahead]
        free = view.free()
        cols = active_columns(view.capacity)
        cap = np.where(view.alive[:, None], view.capacity, 0)[:, cols]
        capn = np.where(cap > 0, cap, 1.0)
        req = w.request[cand][:, cols]
        pending = view.pending.copy()
        # remaining work of each candidate's job (pending instances x duration)
        job_work = np.bincount(w.job, weights=view.pending * w.duration, minlength=w.n_jobs)
        rem = job_work[w.job[cand]]
        srpt = 1.0 - rem / max(rem.max(), 1e-12)
        actions: list[Place] = []
        fcols = free[:, cols]
        counts = _fit_matrix(fcols, req)               # (K, M) instances that fit
        f = fcols / capn                               # (M, r) normalised free
        wreq = req / capn.mean(axis=0)
        align = wreq @ f.T                             # (K, M)
        bonus = self.params.srpt_weight * srpt[:, None]
        while True:
            live = pending[cand] > 0
            if not live.any():
                break
            ok = (counts > 0) & live[:, None]
            if not ok.any():
                break
            scale = np.abs(align[ok]).mean()
            score = np.where(ok, align + bonus * scale, -np.inf)
            i, m = np.unravel_index(int(np.argmax(score)), score.shape)
            i, m = int(i), int(m)
            t = int(cand[i])
            k = int(min(counts[i, m], pending[t]))
            actions.append(Place(t, m, k))
            free[m] -= w.request[t] * k
            pending[t] -= k
            fcols[m] = free[m, cols]
            counts[:, m] = _fit_matrix(fcols[m:m + 1], req)[:, 0]
            f[m] = fcols[m] / capn[m]
            align[:, m] = wreq @ f[m]
        return actions
