"""Tools a user runs on networks, outside the comparison pipeline.

Takes a run (or one network and its data) and returns a result with its own report: robustness
radii of a run's networks (:mod:`.radii`, ``ibcheck radius``) and the KKT search of the max-margin
problem on a dataset (:mod:`.kkt_search`, ``ibcheck kkt``).
"""
