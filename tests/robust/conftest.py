from tests.robust.robust_helpers import inputs  # noqa: F401  (the fixture)
