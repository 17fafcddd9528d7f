"""DRESS: dynamic reservation for small jobs (CLOUD'18).

See ``docs/papers/dress.md``. ``algorithms.py`` holds Algorithms 1-3 and the release
estimator.
"""
POLICIES = {"dress": "policy"}
