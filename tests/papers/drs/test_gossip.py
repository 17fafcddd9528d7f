"""Gossip between scheduler managers over a geometric random graph; Algorithm 1."""
from __future__ import annotations

import numpy as np

from schedlab.papers.drs._gossip import GossipNet, grg_radius
from schedlab.papers.drs.algorithms import job_processing as route_job


def _connected(adj: list[np.ndarray]) -> bool:
    seen, todo = {0}, [0]
    while todo:
        i = todo.pop()
        for j in adj[i]:
            if int(j) not in seen:
                seen.add(int(j))
                todo.append(int(j))
    return len(seen) == len(adj)


def test_gossip_converges_on_small_graph():
    rng = np.random.default_rng(4)
    pts = rng.random((6, 2))
    owner = np.repeat(np.arange(6), 2)            # 12 schedulers, 2 per manager
    net = GossipNet(pts, owner, base_latency=0.01, latency_per_unit=0.02)
    assert all(len(nb) for nb in net.neighbours)
    assert _connected(net.neighbours)
    loads = rng.random(12)
    net.report(loads, 0.0)
    assert np.isinf(net.stamp).any()              # others unknown before gossip
    now, rounds = 0.0, 0
    while np.isinf(net.stamp).any() and rounds < 100:
        net.round(now, rng)
        now += 0.1
        net.deliver(now)
        rounds += 1
    assert not np.isinf(net.stamp).any()
    assert rounds <= 30                            # O(log N / r) rounds, small here
    assert np.allclose(net.load, loads[None, :])


def test_messages_arrive_after_latency():
    net = GossipNet(np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([0, 1]),
                    base_latency=0.05, latency_per_unit=0.1)
    net.report(np.array([3.0, 7.0]), 0.0)
    net.round(0.0, np.random.default_rng(0))
    net.deliver(0.1)                               # latency is 0.15
    assert np.isinf(net.stamp[1, 0])
    net.deliver(0.15)
    assert net.load[1, 0] == 3.0


def test_radius_gives_every_manager_a_neighbour():
    pts = np.array([[0, 0], [0.1, 0], [0.9, 0.9], [1.0, 1.0]])
    r = grg_radius(pts, connected=False)
    assert r >= 0.1 - 1e-12 and r < 0.5
    assert grg_radius(pts) > 1.0                   # connecting the two pairs needs more


def test_route_to_nearest_lightly_loaded():
    pts = np.array([[0.0, 0.0], [0.5, 0.0], [1.0, 0.0]])
    dom = np.zeros(3, dtype=int)
    user = np.array([0.0, 0.0])
    # nearest is heavily loaded; the next one is below the domain mean
    assert route_job(user, pts, np.arange(3), np.array([0.9, 0.1, 0.5]), dom) == 1
    # nobody below the mean (all equal): least loaded, nearest first
    assert route_job(user, pts, np.arange(3), np.array([0.2, 0.2, 0.2]), dom) == 0
