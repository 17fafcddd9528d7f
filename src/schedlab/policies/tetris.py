"""Tetris multi-resource packing (baseline)."""
from __future__ import annotations

import numpy as np

from schedlab.policies._phases import active_columns, fit_counts
from schedlab.policies.base import Place, Policy, PolicyParams
from schedlab.policies.registry import register


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
        lookahead: int = 64
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
        while True:
            live = pending[cand] > 0
            if not live.any():
                break
            f = free[:, cols] / capn                        # (M, r)
            align = (req / capn.mean(axis=0)) @ f.T         # (K, M)
            fits = np.stack([fit_counts(free, w.request[t]) > 0 for t in cand])
            score = np.where(fits & live[:, None], align, -np.inf)
            best = np.unravel_index(np.argmax(score + self.params.srpt_weight
                                              * np.abs(align).mean() * srpt[:, None]), score.shape)
            if not np.isfinite(score[best]):
                break
            i, m = int(best[0]), int(best[1])
            t = int(cand[i])
            k = int(min(fit_counts(free[m:m + 1], w.request[t])[0], pending[t]))
            actions.append(Place(t, m, k))
            free[m] -= w.request[t] * k
            pending[t] -= k
        return actions
