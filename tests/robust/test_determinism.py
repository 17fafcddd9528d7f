"""Every registered policy gives the same full digest twice in this process and once in a
pool worker (another worker count): attempt records, job rows and summary."""
from concurrent.futures import ProcessPoolExecutor
import multiprocessing as mp
from pathlib import Path

import pytest

import schedlab
from schedlab._workers import init_worker
from scripts.result_digest import frame_sha, summary_sha

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# (policy id, parameters); DRS with its MILP solver is a case of its own
CASES = [(pid, {}) for pid in schedlab.policy_ids()] + [("drs", {"solver": "milp"})]
IDS = [pid + ("[milp]" if params else "") for pid, params in CASES]


def digest(pid: str, params: dict) -> str:
    res = schedlab.simulate(EXAMPLES / "jobs.csv", EXAMPLES / "cluster.csv", pid,
                            params=params, seed=3)
    return f"{frame_sha(res.attempts)} {frame_sha(res.jobs)} {summary_sha(res.summary)}"


@pytest.fixture(scope="module")
def pooled():
    """Every case's digest computed by a pool of 2 worker processes."""
    with ProcessPoolExecutor(max_workers=2, mp_context=mp.get_context("spawn"),
                             initializer=init_worker) as pool:
        futures = {i: pool.submit(digest, pid, params) for i, (pid, params) in zip(IDS, CASES)}
        return {i: f.result() for i, f in futures.items()}


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_same_digest_twice_and_in_a_pool(case, pooled):
    pid, params = case
    first, second = digest(pid, params), digest(pid, params)
    assert first == second
    assert pooled[IDS[CASES.index(case)]] == first
