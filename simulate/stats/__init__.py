"""Stage 3, statistics: each estimator implemented once.

Takes fit rows (cells, seeds, log values, censoring) and the design's fit terms
(:mod:`~ibcheck.simulate.experiments.terms`) and returns fits: least squares and the combination of
runs (:mod:`.estimate`), exponent fits with honest CIs (:mod:`.fit`), local exponents and the
correction-to-scaling fit (:mod:`.drift`), group-sequential boundaries (:mod:`.boundaries`), and the t law's
quantiles and tails at scalar arguments (:mod:`.laws`);
censored rows enter the fits as bounds (Tobit, in :mod:`.estimate`). No verdict is drawn here.
"""
