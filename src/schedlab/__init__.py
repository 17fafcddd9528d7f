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

from schedlab.reports.compare import compare  # noqa: E402
from schedlab.sweeps import sweep  # noqa: E402

__all__ = ["compare", "sweep", "ClusterSpec", "EngineConfig", "InputError", "RunResult", "Workload", "__version__",
           "homogeneous_cluster", "make_policy", "policy_ids", "read_cluster", "simulate"]
