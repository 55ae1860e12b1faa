"""Stage 2, the sweep: every (cell, seed) of a design measured once, and stored.

Takes tasks (claim, experiment, cell, seed, fixed settings, code version) and returns stored rows:
task keys and the code hash (:mod:`.tasks`), the SQLite file and its one owner (:mod:`.store`),
where the tasks run (:mod:`.executor`: this process, a local pool or Dask), and the rows as fit
rows (:mod:`.measurements`, the same object a user's CSV becomes).
"""
