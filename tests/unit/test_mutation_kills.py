"""Pins found by mutation testing (docs/guides/testing.md): each test kills mutants of the
engine, the cluster model or a baseline policy that the rest of the fast suite let live."""
