"""Paper reproductions: each module runs a paper's experiments and checks its claims.

A module ``schedlab.reproduce.<paper>`` exposes ``reproduce(*, seeds, out, quick) ->
ReproductionResult`` (see :mod:`schedlab.reproduce.common`). ``schedlab reproduce <paper>``
calls it, prints the tables and writes ``acceptance.csv`` beside the data files.
"""
PAPERS = ("hybrid", "dress", "rose", "drs")
