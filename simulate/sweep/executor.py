"""The executor stage: where a sweep's tasks run (this process, a local pool, or Dask).

It receives the resolved experiment, measure included (:func:`simulate.sweep.tasks.pack`), never a name
to look up in a worker; rows are written by the :class:`~simulate.sweep.store.SweepStore` it runs for.
A local pool is opened once and reused across the rounds of a budgeted sweep.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ibcheck.theory.argtypes import require_int


@dataclass
class Executor:
    """``workers`` local processes (1: this process), or Dask: ``dask=True`` starts a LocalCluster of
    ``workers``, ``scheduler="tcp://..."`` joins a running one."""

    workers: int = 1
    scheduler: str | None = None
    dask: bool = False
    progress: bool = True
    _pool: object = field(default=None, repr=False)

    def __post_init__(self):
        require_int("workers", self.workers, 1)

    @property
    def kind(self) -> str:
        return "dask" if (self.scheduler or self.dask) else "pool" if self.workers > 1 else "local"

    def __enter__(self) -> Executor:
        if self.kind == "pool":
            from ibcheck.simulate.sweep.tasks import local_pool

            self._pool = local_pool(self.workers)
        return self

    def __exit__(self, *exc) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)  # type: ignore[attr-defined]
            self._pool = None

    def run(self, store, tasks: list, version: str, experiment) -> dict:
        """Run the tasks ``store`` lacks with ``experiment``; returns the sweep's counts."""
        return store.run(tasks, version, experiment, workers=self.workers, scheduler=self.scheduler, dask=self.dask,
                         progress=self.progress, pool=self._pool)
