"""Figures of a run: the cosine matrix (neurons x features) as a heatmap PNG."""
from __future__ import annotations

import numpy as np

from ibcheck.theory.atomic import save_figure_file


def cosine_heatmap(mats: list[np.ndarray], result, path: str) -> None:
    """Seed 0's cosine matrix, neurons sorted by class, with the same-class prediction in the title."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cfg = result.config
    C = mats[0]
    row = result.summary[0]
    n_show = min(len(mats), 3)
    fig, axes = plt.subplots(1, n_show, figsize=(4.2 * n_show + 1, 0.22 * C.shape[0] + 2.2), squeeze=False)
    for i in range(n_show):
        ax = axes[0, i]
        im = ax.imshow(mats[i], cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
        ax.set_xlabel("feature j (cluster mean)")
        ax.set_xticks(range(mats[i].shape[1]))
        ax.set_ylabel("neuron")
        ax.set_title(f"seed {result.summary[i]['seed']}", fontsize=9)
        for (r, c), v in np.ndenumerate(mats[i]):
            if mats[i].size <= 400:
                ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=6)
    fig.colorbar(im, ax=axes[0, -1], fraction=0.05)
    same = row.get("cosine_same_class_mean")
    other = row.get("cosine_other_class_mean")
    fig.suptitle(f"cos(w_r, mu_j): {cfg.setting}, d={cfg.data.d}, k={cfg.data.k}, n={cfg.data.n}, m={cfg.model.m}, "
                 f"init_scale={cfg.model.init_scale}; same-class mean {same:.3f}, other-class mean "
                 f"{other if other is None else round(other, 3)}", fontsize=9)
    fig.tight_layout()
    save_figure_file(fig, path)
    plt.close(fig)


def save_figure(fig, ax, path: str, title: str, legend_fontsize: int = 8, ncol: int = 1, grid_which: str = "both") -> None:
    """Title, grid, legend, tight layout, save at 110 dpi, close: the common end of every figure."""
    import matplotlib.pyplot as plt

    ax.set_title(title, fontsize=9)
    ax.grid(True, which=grid_which, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=legend_fontsize, ncol=ncol)
    fig.tight_layout()
    save_figure_file(fig, path)
    plt.close(fig)
