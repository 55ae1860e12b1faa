"""Stage 1, experiments: what is measured for a claim.

Takes a claim id and returns its :class:`~ibcheck.simulate.experiments.builtin.Experiment`: the
measure ``measure(cell, seed) -> {quantity: value}``, its grids, seeds, fixed settings and declared
cost. Built-in experiments, a user's (the ``@ibcheck.experiment`` decorator), the certified KKT
points of one sample (:mod:`.kkt_sample`), designs read from the applicability window
(:mod:`.window`) and the template of a user's claim (:mod:`.scaffold`).
"""
