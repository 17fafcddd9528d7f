"""DRS: dependency-aware, cost-efficient DAG scheduling (CloudCom'16).

See ``docs/papers/drs.md``. ``algorithms.py`` holds Job_Processing, Task_Scheduling, the
waiting-time predictor and the cost ILP.
"""
POLICIES = {"drs": "policy", "srpt": "srpt", "natjam": "natjam", "clr": "clr", "snb": "snb"}
