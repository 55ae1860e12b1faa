"""Stage 5, the comparison: the short driver over the stages, and its typed result.

Takes a claim id and options and returns a :class:`~ibcheck.simulate.compare.result.ComparisonResult`:
the one validation boundary (:mod:`.inputs`), the driver Design -> sweep -> Measurements -> analysis ->
rules -> policy -> result (:mod:`.driver`), the typed record (:mod:`.record`) and result
(:mod:`.result`), a user's CSV through the same stages (:mod:`.from_csv`), and the calibration of the
verdict engine on synthetic truth (:mod:`.calibrate`).
"""
