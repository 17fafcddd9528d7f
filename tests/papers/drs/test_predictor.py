"""Algorithm 3 and the queue-length predictor on the paper's motivating example.

Worker A has two 100 ms tasks queued, worker B one 400 ms task; each has one processor,
busy with a task that ends now. FIFO waits of a new task: A 200 ms, B 400 ms.
"""
from __future__ import annotations

import numpy as np
import pytest

from schedlab.papers.drs.algorithms import (WaitHistory, queue_len_only, queued_work_level,
                                             waiting_time as mutual_reinforcement)

SLOTS = np.array([1.0, 1.0])
QUEUED_SERVICE = np.array([0.1 + 0.1, 0.4])
QUEUED_COUNT = np.array([2.0, 1.0])
REALIZED = np.array([0.2, 0.4])


def test_motivating_example():
    starts_now = np.array([False, False])
    L = queued_work_level(QUEUED_SERVICE, np.zeros(2), SLOTS, starts_now)
    T, _, _ = mutual_reinforcement(L, L)                       # no history: T0 = L
    mean_service = np.full(2, (0.1 + 0.1 + 0.4) / 3)
    Q = queue_len_only(QUEUED_COUNT, SLOTS, mean_service, starts_now)
    assert int(np.argmin(T)) == 0          # Alg. 3 picks A (200 ms)
    assert int(np.argmin(Q)) == 1          # queue length picks B (one task)
    assert T == pytest.approx(REALIZED)
    # choosing by queue length costs 200 ms of extra wait
    assert REALIZED[np.argmin(Q)] - REALIZED[np.argmin(T)] == pytest.approx(0.2)
    assert np.abs(T - REALIZED).mean() < np.abs(Q - REALIZED).mean()


def test_truncated_iteration_weights_history():
    T0, L = np.array([1.0, 0.0]), np.array([0.2, 0.4])
    T, L_out, c = mutual_reinforcement(T0, L, gamma=0.5, theta=0.5, h=3, eps=0.0)
    assert c == 3
    assert L_out == pytest.approx(L)                   # L fully labelled (clamped)
    assert T == pytest.approx(L + 0.5 ** 3 * (T0 - L))  # closed form with L fully labelled


def test_gauss_seidel_order_without_labels():
    T, L, _ = mutual_reinforcement(np.array([1.0]), np.array([0.0]), h=1, eps=0.0,
                                   label_L=np.array([False]))
    assert T[0] == pytest.approx(0.5)        # 0.5*1 + 0.5*0 (from L_c)
    assert L[0] == pytest.approx(0.25)       # 0.5*0 + 0.5*T_{c+1}


def test_wait_history_ewma():
    h = WaitHistory(2, 0.3)
    h.observe(0, 1.0)
    h.observe(0, 0.0)
    assert h.T0(np.array([0, 1]), np.array([9.0, 5.0])) == pytest.approx([0.7, 5.0])
