"""Speed of the KKT toolkit; prints each figure.

* the KKT certificate at n = 1000, width 100, d = 100 (a GD-trained network, loss-based
  schedule), against the plain program (full Jacobian, no QR compression, no ties);
* SLSQP per start at n = 50, width 20, d = 20;
* the global SOCP (pattern enumeration + one SOCP) at n = 16, d = 2;
* KKT points certified per second on FVBS23 cluster samples (d = 1024, k = 8, sigma = 1) at n = 300, 600 and 1000:
  GD networks (width 6) as starts of the KKT engine's tie-aware polish (certified at 1e-6 between programs), against the
  same polish as it was before issue 28's speedups (the reference): every cone one interior-point program, neurons that
  share a sign and a pattern not merged. ``--sizes 300,600`` picks the sizes.
* one coupled group's program at d = 4096, k = 16, n = 1107 (seconds per neuron): the Gram-space program against
  Clarabel.
* one cone program on the per-cluster cone (d = 4096, k = 16, n = 1107): lone neurons solved exactly (non-negative
  least squares) against the joint interior-point program.
* the KKT certificate at d = 4096, k = 16, n = 1107, width 32 (the per-cluster cone's optimum, two neurons per cluster,
  and the next cones': 800-2500 ties): the Gram-space program (:mod:`ibcheck.solvers.kkt.multipliers`) against the
  parameter-space reference (the QR of the parameters x (active + ties) matrix and Clarabel), same networks, same run;
* one start (GD in the data's span, the tie-aware polish, a certificate per program) at (256, 8, n = 246) and at
  (4096, 16, n = 1107);
* one FVBS23.thm.4_2 sample of the full design at d = 4096, k = 16 (n = 1107), whole.

``--only NAME[,NAME]`` runs some of them: main, polish, lone, coupled, certificate, start, sample.

Each figure is recorded in docs/performance.md (bench/record.py) under its own id (``kkt_speed.main.certificate``,
``kkt_speed.main.slsqp``, ``kkt_speed.main.global_socp``, ``kkt_speed.polish.nN`` per size, ``kkt_speed.lone``,
``kkt_speed.coupled``, ``kkt_speed.certificate``, ``kkt_speed.start``, ``kkt_speed.sample``): ``--only`` and ``--sizes``
replace the rows of what they ran and leave the others.
"""
from __future__ import annotations

import time
from dataclasses import replace

import cvxpy as cp
import numpy as np
from record import command_line, record  # run as a script: bench/ is on the path

from ibcheck.simulate.substrate.models import ModelConfig
from ibcheck.simulate.substrate.trainer import TrainConfig
from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run
from ibcheck.solvers.kkt.certificate import kkt_certificate
from ibcheck.solvers.kkt.global_opt import global_max_margin
from ibcheck.solvers.kkt.jacobian import margin_jacobian
from ibcheck.solvers.kkt.search import kkt_search, random_start


def _record(measurement_id: str, what: str, figure: str, extra: dict | None = None) -> None:
    record(measurement_id, figure, command_line(__file__), extra, what=what)


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
    _record("kkt_speed.main.certificate", f"the KKT certificate at n = 1000, width 100, d = 100 ({cert.scaled.params().size} parameters, "
            "a GD-trained network), against the uncompressed program (full Jacobian, no QR compression, no ties)",
            f"**{t_cert * 1000:.0f} ms** [{cert.solver_status}, {cert.n_active} active] against {t_ref * 1000:.0f} ms [{prob.status}] "
            f"({t_ref / t_cert:.1f}x)", {"seconds": t_cert, "reference_seconds": t_ref})

    from ibcheck.simulate.substrate.data import clusters

    ds2 = clusters(20, 4, 50, sigma=0.5, seed=0)
    rng = np.random.default_rng(0)
    starts = [(f"r{i}", random_start(20, 20, rng)) for i in range(5)]
    t = time.perf_counter()
    out = kkt_search(ds2.X, ds2.y, starts)
    per = (time.perf_counter() - t) / len(starts)
    ok = sum(r.certificate.is_kkt(1e-5) for r in out)
    print(f"SLSQP n=50, width 20, d=20: {per:.2f} s per start (certificate included); {ok}/{len(out)} certified KKT")
    _record("kkt_speed.main.slsqp", "SLSQP per start at n = 50, width 20, d = 20 (its certificate included)",
            f"**{per:.2f} s** per start; {ok} of {len(out)} certified KKT", {"seconds_per_start": per})

    rng = np.random.default_rng(1)
    X = rng.standard_normal((16, 2))
    y = np.where(rng.random(16) < 0.5, 1.0, -1.0)
    t = time.perf_counter()
    g = global_max_margin(X, y)
    sec = time.perf_counter() - t
    print(f"global SOCP n=16, d=2: {sec:.2f} s ({g.n_patterns} patterns, {g.n_blocks} neurons, value {g.value:.6g}, {g.status})")
    _record("kkt_speed.main.global_socp", "the global SOCP (pattern enumeration + one SOCP) at n = 16, d = 2",
            f"**{sec:.2f} s** ({g.n_patterns} patterns, {g.n_blocks} neurons, {g.status})", {"seconds": sec})


def _gd_networks(n: int, width: int = 6, nets: int = 2):
    """``nets`` GD networks trained on one FVBS23 sample of size n (the measure's settings)."""
    cfg = RunConfig(setting="two-layer", data=DataConfig(kind="clusters", d=1024, k=8, n=n, sigma=1.0, seed=0, n_test=10),
                    model=ModelConfig("two-layer", width=width, init_scale=0.5),
                    train=TrainConfig(steps=2000, lr=0.05, loss="exp", reduction="sum", schedule="loss-based",
                                      target_log10_loss=-30, progress=False), seeds=nets)
    r = run(cfg)
    return r.networks, r.datasets[0]


def polish_rate(sizes: list[int]) -> None:
    """KKT points certified per second by the engine's tie-aware polish from the GD networks' patterns (certified between
    programs), against the same polish with the joint interior-point program for every cone and no merged neurons (the
    reference, as before issue 28's speedups); same run, same starts."""
    import ibcheck.solvers.kkt.polish as polish
    from ibcheck.solvers.kkt.engine import Budget, search

    merged = polish._merged
    budget = Budget(gd=0, cones=False, programs=8, slsqp=0)
    for n in sizes:
        nets, ds = _gd_networks(n)
        starts = tuple((f"gd {i}", net) for i, net in enumerate(nets))
        rates = {}
        for name, fn, split in (("engine", merged, True), ("reference", lambda D, s: (D, s), False)):
            polish._merged, polish.SPLIT = fn, split
            try:
                t = time.perf_counter()
                res = search(ds.X, ds.y, None, starts, budget)
                rates[name] = (sum(c.certified for c in res.candidates), time.perf_counter() - t)
            finally:
                polish._merged, polish.SPLIT = merged, True
        (ok, t), (ok_ref, t_ref) = rates["engine"], rates["reference"]
        print(f"tie-aware polish n={n}, d=1024, k=8, width 6: {ok}/{len(nets)} certified (1e-6) in {t:.1f} s = {ok / t:.3f} KKT "
              f"points/s; reference {ok_ref}/{len(nets)} in {t_ref:.1f} s = {ok_ref / t_ref:.3f}/s; ratio {t_ref / t:.2f}x")
        _record(f"kkt_speed.polish.n{n}", f"KKT points certified per second by the engine's tie-aware polish, FVBS23 samples d = 1024, "
                f"k = 8, n = {n} ({len(nets)} GD networks of width 6 as starts), against the polish before issue 28's speedups",
                f"**{ok / t:.3g}/s** ({ok} of {len(nets)} in {t:.1f} s; target 1/s), the reference {ok_ref / t_ref:.3g}/s ({ok_ref} of "
                f"{len(nets)} in {t_ref:.1f} s); {t_ref / t:.1f}x", {"per_second": ok / t, "reference_per_second": ok_ref / t_ref})


def coupled_group(n: int = 1107, d: int = 4096, k: int = 16) -> None:
    """One coupled group's program at the report-full design's largest cell: the cone the per-cluster cone's binding walls
    point to (neurons coupled through shared points), seconds per neuron: the engine's Gram-space program against
    Clarabel (the reference), same program, same run."""
    import ibcheck.solvers.kkt.polish as polish
    from ibcheck.simulate.substrate.data import clusters
    from ibcheck.solvers.kkt.cones import family_cone
    from ibcheck.solvers.kkt.gram import gram_cone_program

    ds = clusters(d, k, n, sigma=1.0, seed=0)
    labels = np.where(np.isin(np.arange(k), ds.J_plus), 1.0, -1.0)
    D, s = family_cone("per-cluster", ds.cluster, labels)
    span = polish.data_span(ds.X)
    o = polish.cone_optimum(ds.X, ds.y, D, s, span=span)
    if o.next_cone is None:
        print("coupled group: the per-cluster cone's optimum binds no wall (P) does not admit; nothing to time")
        return
    D2, s2 = o.next_cone
    groups = [g for g in polish._components(D2) if len(g) > 1]
    if not groups:
        print("coupled group: the next cone has lone neurons only")
        return
    g = max(groups, key=len)
    rows = np.flatnonzero((D2[:, g] > 0).any(axis=1))
    t = time.perf_counter()
    out = gram_cone_program(span[1], ds.y, D2[:, g], s2[g], rows)
    sec = time.perf_counter() - t
    t = time.perf_counter()
    status, V_ref, *_ = polish._block_program(span[1], ds.y, D2[:, g], s2[g], rows)
    sec_ref = time.perf_counter() - t
    value = "not verified" if out is None else f"{np.linalg.norm(out[1], axis=1).sum():.12g}"
    value_ref = "none" if V_ref is None else f"{np.linalg.norm(V_ref, axis=1).sum():.12g}"
    print(f"coupled group d={d}, k={k}, n={n}: {len(g)} neurons; Gram-space program {sec:.2f} s = {sec / len(g):.3f} s per "
          f"neuron [sum ||v_j|| {value}] (target <= 0.5 s per neuron); Clarabel {sec_ref:.1f} s = {sec_ref / len(g):.2f} s per "
          f"neuron [{status}, {value_ref}]; ratio {sec_ref / sec:.1f}x")
    _record("kkt_speed.coupled", f"one coupled group's cone program at d = {d}, k = {k}, n = {n} ({len(g)} neurons): the Gram-space "
            "program against Clarabel, seconds per neuron",
            f"Gram space **{sec / len(g):.3f} s** per neuron ({sec:.2f} s; target 0.5 s); Clarabel {sec_ref / len(g):.2f} s per neuron "
            f"({sec_ref:.1f} s, {status}); {sec_ref / sec:.1f}x; sum of the neurons' norms {value} against {value_ref}",
            {"seconds": sec, "reference_seconds": sec_ref, "neurons": len(g)})


def lone_neurons() -> None:
    """One program on the per-cluster cone at the report-full design's largest cell: split against joint."""
    import ibcheck.solvers.kkt.polish as polish
    from ibcheck.simulate.substrate.data import clusters
    from ibcheck.solvers.kkt.cones import family_cone

    ds = clusters(4096, 16, 1107, sigma=1.0, seed=0)
    labels = np.where(np.isin(np.arange(16), ds.J_plus), 1.0, -1.0)
    D, s = family_cone("per-cluster", ds.cluster, labels)
    out = {}
    for split in (True, False):
        polish.SPLIT = split
        try:
            t = time.perf_counter()
            p = polish.cone_polish(ds.X, ds.y, D, s, rounds=1)
            out[split] = (time.perf_counter() - t, 0.5 * float(p.net.params() @ p.net.params()), p.solver_status)
        finally:
            polish.SPLIT = True
    (t, v, st), (t_ref, v_ref, st_ref) = out[True], out[False]
    print(f"per-cluster cone d=4096, k=16, n=1107: lone neurons {t:.2f} s [{st}, 1/2||theta||^2 {v:.10g}]; joint program "
          f"{t_ref:.1f} s [{st_ref}, {v_ref:.10g}]; ratio {t_ref / t:.1f}x")
    _record("kkt_speed.lone", "one program on the per-cluster cone, d = 4096, k = 16, n = 1107, lone neurons solved exactly "
            "(non-negative least squares), against the joint interior-point program",
            f"**{t:.2f} s** against {t_ref:.1f} s ({t_ref / t:.1f}x); 1/2 ||theta||^2 {v:.10g} against {v_ref:.10g}",
            {"seconds": t, "reference_seconds": t_ref})


def gram_certificate(d: int = 4096, k: int = 16, n: int = 1107, reference: bool = True) -> None:
    """The certificate in the Gram space against the parameter-space reference (issue 48's target: <= 1 s at width 32)."""
    import ibcheck.solvers.kkt.polish as polish
    from ibcheck.simulate.substrate.data import clusters
    from ibcheck.solvers.kkt.certificate import kkt_certificate_params
    from ibcheck.solvers.kkt.cones import family_cone

    ds = clusters(d, k, n, sigma=1.0, seed=0)
    labels = np.where(np.isin(np.arange(k), ds.J_plus), 1.0, -1.0)
    D, s = family_cone("per-cluster", ds.cluster, labels)
    D, s = np.repeat(D, 2, axis=1), np.repeat(s, 2)
    span = polish.data_span(ds.X)
    parts, ties = [], []
    for r in range(3):
        o = polish.cone_optimum(ds.X, ds.y, D, s, span=span)
        # the cone program merges neurons that share a sign and a pattern (16 here): each is split into two parallel
        # copies scaled by 1/sqrt(2), the same function and the same KKT question at width 32 (ties doubled)
        net = replace(o.net, W=np.repeat(o.net.W, 2, axis=0) / np.sqrt(2), a=np.repeat(o.net.a, 2) / np.sqrt(2),
                      b=np.repeat(o.net.b, 2) / np.sqrt(2))
        t = time.perf_counter()
        g = kkt_certificate(net, ds.X, ds.y)
        sec = time.perf_counter() - t
        line = (f"certificate d={d}, k={k}, n={n}, width {net.width} (program {r + 1} of the polish): {g.n_active} active, "
                f"{g.n_ties} ties; Gram space {sec:.2f} s [{g.solver_status}, residual {g.stationarity_residual:.6g}] (target <= 1 s)")
        parts.append(f"**{sec:.2f} s**")
        ties.append(f"{g.n_active} active, {g.n_ties} ties")
        if reference and r == 0:
            t = time.perf_counter()
            p = kkt_certificate_params(net, ds.X, ds.y)
            sec_ref = time.perf_counter() - t
            line += (f"; parameter space {sec_ref:.1f} s [{p.solver_status}, residual {p.stationarity_residual:.6g}]; ratio "
                     f"{sec_ref / sec:.0f}x; |difference| {abs(g.stationarity_residual - p.stationarity_residual):.1e}")
            ties[-1] += (f"; the parameter-space reference {sec_ref:.1f} s ({sec_ref / sec:.0f}x), the same residual to "
                         f"{abs(g.stationarity_residual - p.stationarity_residual):.1e}")
        print(line, flush=True)
        if o.next_cone is None:
            break
        D, s = o.next_cone
    _record("kkt_speed.certificate" + ("" if reference else ".no_reference"),
            f"the KKT certificate at d = {d}, k = {k}, n = {n}, width 32 (the per-cluster cone's optimum and the next cones', each "
            "neuron split in two): the Gram-space program against the parameter-space reference on the first",
            f"Gram space {', '.join(parts)} (target 1 s) on {len(parts)} programs ({'; '.join(ties)})")


def one_start(d: int, k: int, n: int, starts: int = 4) -> str:
    """One GD start of the engine, whole: GD in the data's span from a per-cluster init, then the tie-aware polish with a
    certificate between programs (issue 48's targets: <= 1 s at (256, 8), <= 5 s at (4096, 16)); the mean of ``starts``."""
    from ibcheck.simulate.substrate.data import clusters
    from ibcheck.solvers.kkt.engine import Budget, polish_and_certify
    from ibcheck.solvers.kkt.gd import gd_pattern, inits
    from ibcheck.solvers.kkt.policy import function_probes
    from ibcheck.solvers.kkt.polish import data_span

    ds = clusters(d, k, n, sigma=1.0, seed=0)
    span = data_span(ds.X)
    probes = function_probes(ds.X)
    rng = np.random.default_rng(0)
    budget = Budget()
    got, secs = [], []
    for init in inits(span[0], ds.X, ds.cluster, ds.y, starts, rng, True):
        t = time.perf_counter()
        D, s = gd_pattern(span[1], ds.y, init, steps=budget.gd_steps)
        c = polish_and_certify(ds.X, ds.y, D, s, init.name, budget, span, probes, [])
        secs.append(time.perf_counter() - t)
        got.append(c.certified)
    target = 1.0 if d <= 256 else 5.0
    print(f"one start d={d}, k={k}, n={n}: {np.mean(secs):.2f} s mean over {starts} ({min(secs):.2f}-{max(secs):.2f} s; "
          f"{sum(got)} certified) (target <= {target:g} s)", flush=True)
    return (f"({d}, {k}, n = {n}): **{np.mean(secs):.2f} s** ({min(secs):.2f}-{max(secs):.2f}; {sum(got)} of {starts} certified; "
            f"target {target:g} s)")


def starts_both(starts: int = 4) -> None:
    """:func:`one_start` at (256, 8, n = 246) and at (4096, 16, n = 1107), recorded as one figure."""
    figures = [one_start(256, 8, 246, starts), one_start(4096, 16, 1107, starts)]
    _record("kkt_speed.start", f"one engine start (GD in the data's span, the tie-aware polish, a certificate per program), mean of {starts}",
            "; ".join(figures))


def fvbs23_sample(d: int = 4096, k: int = 16, seed: int = 0) -> None:
    """One FVBS23.thm.4_2 sample of the full design at its largest cell (issue 48's target: <= 120 s), measured whole:
    GD networks, the KKT search, certificates, flip norms and transfers."""
    from ibcheck.simulate.experiments.registry import EXPERIMENTS

    exp = EXPERIMENTS["FVBS23.thm.4_2"]
    cell = {**exp.fixed_at(False), "d": d, "k": k}
    t = time.perf_counter()
    row = exp.measure(cell, seed)
    sec = time.perf_counter() - t
    print(f"FVBS23.thm.4_2 sample, full design, d={d}, k={k}, seed {seed}: {sec:.0f} s (target <= 120 s); "
          f"{row.get('kkt_certified')} of {row.get('kkt_trained')} candidates certified, distinct points {row.get('kkt_distinct')}, "
          f"{row.get('kkt_gd_starts')} GD starts, unseen {row.get('kkt_gd_unseen')}, stop {row.get('kkt_stop')}")
    _record("kkt_speed.sample" + ("" if (d, k, seed) == (4096, 16, 0) else f"[d={d};k={k};seed={seed}]"),
            f"one FVBS23.thm.4_2 sample of the full design at ({d}, {k}), seed {seed}, whole (its trained networks, the KKT search, "
            "certificates, flip norms, transfers)",
            f"**{sec:.0f} s** (target 120 s); {row.get('kkt_certified')} of {row.get('kkt_trained')} candidates certified, "
            f"{row.get('kkt_distinct')} distinct points, {row.get('kkt_gd_starts')} GD starts, unseen {row.get('kkt_gd_unseen')}, "
            f"stop {row.get('kkt_stop')}", {"seconds": sec})


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="300,600,1000", help="training-set sizes n for the polish rate")
    ap.add_argument("--only", default="", help="some of: main, polish, lone, coupled, certificate, start, sample")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    runs = {"main": main, "polish": lambda: polish_rate([int(x) for x in args.sizes.split(",")]), "lone": lone_neurons,
            "coupled": coupled_group, "certificate": gram_certificate,
            "start": starts_both, "sample": fvbs23_sample}
    for name, fn in runs.items():
        if only is None or name in only:
            fn()
