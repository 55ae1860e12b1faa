"""LL20: the normalized margin grows as the loss falls, faster under the loss-based step; the
smoothed margin is monotone (LL20.thm.monotone); the direction tends to a KKT point (LL20.thm.kkt);
the loss and norm rates (LL20.thm.rates) are compared with their own statistics."""
from __future__ import annotations

from typing import Any, Mapping

from ibcheck.simulate.report.figures import finish
from ibcheck.simulate.reproductions.criteria import AtLeast, AtMost, Holds, Measured, Reported
from ibcheck.theory.result import markdown_table, new_figure


def _margin_figure(trajs: dict):
    fig, ax = new_figure()
    for name, tr in trajs.items():
        pts = [(r["log10_loss_sum"], r["normalized_margin"]) for r in tr if r["train_accuracy"] == 1.0]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3, label=name)
    ax.invert_xaxis()
    ax.set_xlabel("log10 training loss (sum)")
    ax.set_ylabel("normalized margin q_min / rho^L")
    return finish(fig, ax, "LL20: the normalized margin keeps growing as the loss falls", grid_which="major")


COMPARES = ("LL20.thm.rates",)


def measure(quick: bool, known: Mapping[str, Any] | None = None) -> Measured:
    from ibcheck.simulate.reproductions import comparison, comparison_rows  # heavy: scipy (loaded on first use)
    from ibcheck.simulate.substrate.models import ModelConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.trainer import TrainConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.substrate.training import DataConfig, RunConfig, run  # heavy: torch (loaded on first use)
    from ibcheck.solvers.kkt.certificate import eps_delta_kkt  # heavy: cvxpy (loaded on first use)

    steps, target = (3000, -800) if quick else (20000, -800)
    R = Measured("LL20: normalized margin under a constant vs the loss-based learning rate", {"steps": steps})
    data = DataConfig(d=20, k=4, n=40, sigma=0.5, n_test=500)
    model = ModelConfig("two-layer", width=10, bias=False, init_scale=1.0)
    const = run(RunConfig(setting="two-layer", data=data, model=model,
                          train=TrainConfig(steps=steps, lr=0.01, loss="exp", reduction="sum", progress=False)))
    lb = run(RunConfig(setting="two-layer", data=data, model=model,
                       train=TrainConfig(steps=steps, lr=0.01, loss="exp", reduction="sum", schedule="loss-based",
                                         target_log10_loss=target, checkpoints=10, progress=False)))
    table = [{"run": name, "step": r["step"], "log10 loss (sum)": f"{r['log10_loss_sum']:.4g}",
              "normalized margin": f"{r['normalized_margin']:.4g}"}
             for name, res in (("constant", const), ("loss-based", lb))
             for r in list(res.trajectory[:: max(1, len(res.trajectory) // 8)]) + [res.trajectory[-1]]]
    R.notes.append(markdown_table(table))
    fc, fl = const.summary[0], lb.summary[0]
    R.add("lowest log10 loss reached (loss-based)", "about -881 (1e-881)", fl["train_log10_loss_sum"], AtMost(-700))
    R.add("normalized margin: loss-based / constant lr", "about 10x larger (1.18e-3 vs about 1e-4)",
          fl["normalized_margin"] / fc["normalized_margin"], AtLeast(1.0, strict=True))
    # LL20.thm.monotone along the constant-lr run, after the loss falls below ell(0) = 1
    sm = [r["smoothed_margin"] for r in const.trajectory if r["log10_loss_sum"] < 0]
    R.add("smoothed margin monotone after t0 (constant lr)", "monotone (LL20.thm.monotone)",
          all(b >= a - 1e-9 * abs(a) for a, b in zip(sm, sm[1:])), Holds())
    ds = lb.dataset()
    eps, delta, _ = eps_delta_kkt(lb.networks[0], ds.X, ds.y)
    eps_t, delta_t, _ = eps_delta_kkt(lb.networks[0], ds.X, ds.y, tie_tol=1e-4)
    R.add("(eps, delta)-KKT of the final direction", "-> (0, 0) (LL20.thm.kkt)", [eps, delta], Reported(),
          f"with near-ties |z| <= 1e-4 allowed: ({eps_t:.3g}, {delta_t:.3g})")
    R.comparisons["rates"] = c = comparison(R, "LL20.thm.rates", quick, known or {})
    comparison_rows(R, c, "{quantity} against T: exponent after the known log offset", "{kind}({expr}) (LL20.thm.rates)", "; see rates/report.md")
    R.figures["margin.png"] = _margin_figure({"constant lr": const.trajectory, "loss-based lr": lb.trajectory})
    return R
