"""HYBRID: sticky slots in preemptive priority scheduling (CoolDC'16).

See ``docs/papers/hybrid.md``. ``algorithms.py`` holds the sticky and regular phases, PRI
and PRI-k.
"""
POLICIES = {"hybrid": "policy", "pri": "pri", "pri-k": "pri_k"}
