"""Stage 3, statistics: each estimator implemented once.

Takes fit rows (cells, seeds, log values, censoring) and returns fits: least squares and the
combination of runs (:mod:`.estimate`), fit terms x^a (log x)^b (log log x)^c (:mod:`.terms`),
exponent fits with honest CIs (:mod:`.fit`), local exponents and the correction-to-scaling fit
(:mod:`.drift`), censored values and their likelihoods (:mod:`.censored`), and group-sequential
boundaries (:mod:`.boundaries`). No verdict is drawn here.
"""
