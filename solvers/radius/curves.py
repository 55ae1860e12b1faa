"""Robust accuracy against eps, from the radii (never by re-attacking at each eps)."""
from __future__ import annotations

import numpy as np

from ibcheck.theory.atomic import save_figure_file


def robust_accuracy(radii: np.ndarray, eps_grid: np.ndarray) -> np.ndarray:
    """``P[r(x) > eps]``: a point is robust at eps iff its radius exceeds eps (ties are errors)."""
    r = np.asarray(radii)[:, None]
    return (r > np.asarray(eps_grid)[None, :]).mean(axis=0)


def plot_robust_accuracy(curves: dict[str, tuple[np.ndarray, np.ndarray]], path: str, markers: dict[str, float] | None = None,
                         title: str = "robust accuracy against the l2 radius") -> None:
    """Several models overlaid: ``curves[label] = (eps_grid, accuracy)``; vertical markers at e.g. sqrt(d/k), sqrt(d)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for label, (eps, acc) in curves.items():
        ax.plot(eps, acc, label=label, lw=2)
    for name, x in (markers or {}).items():
        ax.axvline(x, ls="--", color="gray", lw=1)
        ax.text(x, 1.02, name, rotation=0, ha="center", va="bottom", fontsize=8, transform=ax.get_xaxis_transform())
    ax.set_xlabel("l2 radius eps")
    ax.set_ylabel("robust accuracy  P[r(x) > eps]")
    ax.set_ylim(-0.02, 1.05)
    ax.set_title(title, fontsize=9, pad=16)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure_file(fig, path)
    plt.close(fig)
