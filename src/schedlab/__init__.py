"""schedlab: a trace-driven simulator for cluster resource scheduling research.

>>> import schedlab
>>> res = schedlab.simulate("builtin:demo", "builtin:demo", "fifo", seed=0)  # doctest: +SKIP
>>> res.summary["makespan"], res.jobs.head()                                  # doctest: +SKIP
"""
from schedlab._version import __version__

from schedlab.cluster.spec import ClusterSpec, homogeneous_cluster, read_cluster  # noqa: E402
from schedlab.engine.config import EngineConfig  # noqa: E402
from schedlab.errors import InputError  # noqa: E402
from schedlab.policies.registry import make_policy, policy_ids  # noqa: E402
from schedlab.run import RunResult, simulate  # noqa: E402
from schedlab.workload.job import Workload  # noqa: E402


__all__ = ["compare", "sweep", "ClusterSpec", "EngineConfig", "InputError", "RunResult", "Workload", "__version__",
           "homogeneous_cluster", "make_policy", "policy_ids", "read_cluster", "simulate"]


def __getattr__(name: str):
    # lazy: compare and sweep bring the report and sweep machinery, which a run does not need
    if name == "compare":
        from schedlab.reports.compare import compare as value
    elif name == "sweep":
        from schedlab.sweeps import sweep as value
    else:
        raise AttributeError(f"module 'schedlab' has no attribute {name!r}")
    globals()[name] = value
    return value
