"""Speed of the KKT toolkit; prints each figure.

* the KKT certificate at n = 1000, width 100, d = 100 (a GD-trained network, loss-based
  schedule), against the plain program (full Jacobian, no QR compression, no ties);
* SLSQP per start at n = 50, width 20, d = 20;
* the global SOCP (pattern enumeration + one SOCP) at n = 16, d = 2.
"""
from __future__ import annotations

import time

import cvxpy as cp
import numpy as np

from ibcheck.simulate.substrate.models import ModelConfig
from ibcheck.simulate.substrate.trainer import TrainConfig
from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run
from ibcheck.solvers.kkt.certificate import kkt_certificate
from ibcheck.solvers.kkt.global_opt import global_max_margin
from ibcheck.solvers.kkt.jacobian import margin_jacobian
from ibcheck.solvers.kkt.search import kkt_search, random_start


def main() -> None:
    cfg = RunConfig(setting="two-layer", data=DataConfig(d=100, k=10, n=1000, sigma=1.0), model=ModelConfig("two-layer", width=100),
                    train=TrainConfig(steps=300, lr=0.1, loss="exp", reduction="sum", schedule="loss-based", progress=False))
    res = run(cfg)
    net, ds = res.networks[0], res.datasets[0]
    t = time.perf_counter()
    cert = kkt_certificate(net, ds.X, ds.y, active_tol=1e-2)
    t_cert = time.perf_counter() - t
    # Reference: the same program on the uncompressed (P x |A|) matrix.
    t = time.perf_counter()
    q, J = margin_jacobian(cert.scaled, ds.X, ds.y)
    A = np.flatnonzero(q <= 1 + 1e-2)
    lam = cp.Variable(len(A), nonneg=True)
    prob = cp.Problem(cp.Minimize(cp.norm(cert.scaled.params() - J[A].T @ lam)))
    prob.solve(solver=cp.CLARABEL)
    t_ref = time.perf_counter() - t
    print(f"certificate n=1000, width 100, d=100 ({cert.scaled.params().size} parameters, {cert.n_active} active): "
          f"{t_cert * 1000:.0f} ms [{cert.solver_status}, residual {cert.stationarity_residual:.3g}]; "
          f"uncompressed program {t_ref * 1000:.0f} ms [{prob.status}] ({t_ref / t_cert:.1f}x)")

    from ibcheck.simulate.substrate.data import clusters

    ds2 = clusters(20, 4, 50, sigma=0.5, seed=0)
    rng = np.random.default_rng(0)
    starts = [(f"r{i}", random_start(20, 20, rng)) for i in range(5)]
    t = time.perf_counter()
    out = kkt_search(ds2.X, ds2.y, starts)
    per = (time.perf_counter() - t) / len(starts)
    ok = sum(r.certificate.is_kkt(1e-5) for r in out)
    print(f"SLSQP n=50, width 20, d=20: {per:.2f} s per start (certificate included); {ok}/{len(out)} certified KKT")

    rng = np.random.default_rng(1)
    X = rng.standard_normal((16, 2))
    y = np.where(rng.random(16) < 0.5, 1.0, -1.0)
    t = time.perf_counter()
    g = global_max_margin(X, y)
    print(f"global SOCP n=16, d=2: {time.perf_counter() - t:.2f} s ({g.n_patterns} patterns, {g.n_blocks} neurons, value {g.value:.6g}, {g.status})")


if __name__ == "__main__":
    main()
