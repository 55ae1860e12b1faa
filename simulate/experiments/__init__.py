"""Stage 1, experiments: what is measured for a claim.

Takes a claim id and returns its :class:`~ibcheck.simulate.experiments.base.Experiment`
(:func:`~ibcheck.simulate.experiments.registry.experiment_for`): the measure
``measure(cell, seed) -> {quantity: value}``, its grids, seeds, fixed settings and declared cost.

- :mod:`.base`: the Experiment type and the fixed parameters of each family of experiments;
- one module per source of measures: :mod:`.lpll25`, :mod:`.constructions` (LPLL25 and FVBS23's
  robust networks), :mod:`.kkt` (the KKT experiment in one place: certified KKT points of a sample,
  FVBS23.thm.4_2 and VYS22.thm.main), :mod:`.bcgt21`, :mod:`.trajectories` (LL20, SHNGS18),
  :mod:`.ssttm18`;
- :mod:`.builtin`: the table of built-in experiments; :mod:`.registry`: a user's experiments (the
  ``@ibcheck.experiment`` decorator) over the built-ins, and the lookup;
- :mod:`.terms`: the fit terms x^a, (log x)^b, (log log x)^c of a bound; :mod:`.design`: the frozen
  Design (grid, seeds, fixed settings, code version, and per bound its fit terms with exact
  exponents), the pipeline's first stage;
- :mod:`.applicability`: the claim's hypotheses at every cell; :mod:`.window`: designs read from the
  applicability window; :mod:`.scaffold`: the template of a user's claim.
"""
