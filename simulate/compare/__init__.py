"""Stage 5, the comparison: the short driver over the stages, and its typed result.

Takes a claim id and options and returns a :class:`~ibcheck.simulate.compare.result.ComparisonResult`:
the frozen design (:mod:`.design`), the driver Design -> sweep -> Measurements -> analysis -> rules
-> policy -> result (:mod:`.driver`), a user's CSV through the same stages (:mod:`.from_csv`), and
the calibration of the verdict engine on synthetic truth (:mod:`.calibrate`).
"""
