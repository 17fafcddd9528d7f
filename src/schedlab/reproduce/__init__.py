"""What every paper reproduction shares: the result type and tables (``common``), the
process pool with resume (``runner``), the stored calibrations (``calibration``) and the
output files (``report``). Each paper's own reproduction is ``schedlab.papers.<name>.reproduce``,
exposing ``reproduce(*, seeds, out, quick) -> ReproductionResult``.
"""
