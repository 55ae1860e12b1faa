"""Stage 0, the substrate: what a measurement is made of (torch).

Takes a declarative :class:`~ibcheck.simulate.substrate.training.RunConfig` (data, model, trainer)
and returns a :class:`~ibcheck.simulate.substrate.training.Run`: seeded data generators
(:mod:`.data`), batched two-layer models (:mod:`.models`), log-space losses (:mod:`.losses`), the
full-batch GD trainer (:mod:`.trainer`), measurements on trained networks (:mod:`.measure`,
:mod:`.one_step`), censored values (:mod:`.censored`: a measurement known only as a bound), independent
random streams (:mod:`.seeds`) and run directories (:mod:`.rundir`).
Nothing here knows about claims, sweeps or verdicts.
"""
