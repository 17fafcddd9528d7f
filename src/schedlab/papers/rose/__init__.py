"""ROSE: speculative over-subscription for YARN-style clusters (ICDCS'18).

See ``docs/papers/rose.md``. ``algorithms.py`` holds LLA, TBAMR, MMF and the NM controls.
"""
POLICIES = {"rose": "policy", "sparrow": "sparrow", "yarn-centralized": "yarn_centralized",
            "yarn-opportunistic": "yarn_opportunistic"}
