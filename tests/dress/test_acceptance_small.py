"""Reduced-scale acceptance for S1 and S2 (2 seeds; the full run uses 5)."""
import numpy as np

from schedlab.metrics.dress_metrics import compare_runs
from schedlab.reproduce.common import seed_list
from schedlab.reproduce.dress import run_pair
from schedlab.workload.dress_workloads import mr_workload, spark_workload


def _changes(gen):
    out = []
    for s in seed_list(2, base=3):
        res = run_pair(gen(s), s)
        out.append(compare_runs(res["capacity"], res["dress"]))
    return out


def test_s1_s2_reduced():
    spark, mr = _changes(spark_workload), _changes(mr_workload)
    s1_spark = np.mean([c["small_jct_change"] for c in spark])
    s1_mr = np.mean([c["small_jct_change"] for c in mr])
    assert -0.60 <= s1_spark <= -0.15                # S1 accept range (Spark)
    assert all(c["small_jct_change"] < 0 for c in spark + mr)   # direction in every seed
    assert s1_mr < 0
    for cs in (spark, mr):                           # S2: makespan flat within ±5%
        assert abs(np.mean([c["makespan_change"] for c in cs])) <= 0.05
