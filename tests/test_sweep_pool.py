"""The local worker pool: one BLAS thread and one torch thread per worker, whatever the parent loaded."""
from __future__ import annotations

from threadpoolctl import threadpool_info

from ibcheck.simulate.sweep.executor import local_pool


def test_a_worker_runs_one_blas_thread():
    """Two workers on two cores with two BLAS threads each ran the KKT engine's factorizations 2.5-4x slower than one
    process alone: the worker limits the BLAS it has already loaded (OMP_NUM_THREADS comes too late for it)."""
    with local_pool(1) as pool:
        info = pool.submit(threadpool_info).result(timeout=120)
    blas = [i for i in info if i.get("user_api") == "blas"]
    assert blas and all(i["num_threads"] == 1 for i in blas)
