"""Run directories: write one atomically, read one back with :func:`load_run`.

A run directory holds ``config.json``, ``summary.json`` (what ``--json`` prints),
``metrics.csv`` (one row per seed), ``trajectory.csv`` (log-spaced steps x seeds),
``weights.npz`` (numpy, loaded with ``allow_pickle=False``), ``networks.json`` (what each
array is) and ``cosine_matrix.png``. It is written to a temporary sibling directory and
renamed into place, so a run that fails leaves nothing half-written.
"""
from __future__ import annotations

import csv
import dataclasses
import json
import os
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np

from ibcheck.simulate.substrate.config import DataConfig, RunConfig, make_dataset
from ibcheck.simulate.substrate.data import Dataset
from ibcheck.simulate.substrate.models import ModelConfig
from ibcheck.simulate.substrate.trainer import TrainConfig
from ibcheck.solvers.networks import network_from_arrays
from ibcheck.theory.atomic import atomic_file, save_figure_file, save_npz
from ibcheck.theory.errors import InputError
from ibcheck.theory.outdir import check_out_dir
from ibcheck.theory.result import Result, new_figure
from ibcheck.theory.result import plain as clean  # noqa: F401  (the one JSON-safe copy; imported from here by the simulate layer)

SUMMARY_KEYS = ("seed", "status", "train_log10_loss", "test_accuracy", "normalized_margin", "smoothed_margin",
                "cosine_same_class_mean", "cosine_other_class_mean", "lambda_within_class_ratio")


@dataclass(frozen=True)
class Run(Result):
    """S trained (or drawn) networks of one config, with their per-seed measurements.

    ``summary`` has one row per seed (``seeds`` is the same list); ``datasets`` is empty for a run
    read back from disk, whose data ``dataset()`` re-creates from the config (deterministic);
    ``path`` is the run directory it was read from or saved to, if any."""

    name: ClassVar[str] = "run"
    config: RunConfig
    datasets: Sequence[Dataset]
    networks: Sequence
    init_W: Sequence[np.ndarray | None]
    summary: Sequence[dict]
    trajectory: Sequence[dict]
    seconds: float = 0.0
    checkpoints: Sequence = ()
    path: str | None = None

    @property
    def seeds(self) -> list[dict]:
        return list(self.summary)

    def dataset(self, seed: int | None = None) -> Dataset:
        """The training data of ``seed`` (default: the first), re-created from the config if not held."""
        cfg = self.config
        i = (seed or cfg.seed0) - cfg.seed0 if cfg.data.per_seed else 0
        if i < len(self.datasets):
            return self.datasets[i]
        return make_dataset(cfg, cfg.data.seed + i)

    def as_json(self) -> dict:
        return summary_json(self)

    def heading(self) -> str:
        return f"{self.config.setting} on {self.config.data_kind}: {len(self.summary)} seed(s), {self.seconds:.1f} s"

    def table(self) -> list[dict]:
        keys = ("seed", "status", "output_abs_mean", "grad_norm_mean") if self.config.setting == "random-net" else SUMMARY_KEYS
        return [{k: r.get(k) for k in keys} for r in self.summary]

    def figure(self):
        """log10 training loss against the step, one line per seed."""
        key = "log10_loss_mean" if self.config.train.reduction == "mean" else "log10_loss_sum"
        rows = [r for r in self.trajectory if r.get(key) is not None]
        if not rows:
            return None
        fig, ax = new_figure()
        for s in sorted({r["seed"] for r in rows}):
            pts = [r for r in rows if r["seed"] == s]
            ax.plot([max(r["step"], 1) for r in pts], [r[key] for r in pts], label=f"seed {s}")
        ax.set_xscale("log")
        ax.set_xlabel("step")
        ax.set_ylabel("log10 training loss")
        ax.legend(fontsize=7)
        ax.set_title(self.heading(), fontsize=9)
        return fig

    def save(self, directory: str, overwrite: bool = False) -> dict[str, str]:  # type: ignore[override]
        """Write the run directory (config, summary, metrics, trajectory, weights) atomically."""
        save_run(self, directory, overwrite)
        return {"run": directory}



def cosine_heatmap(mats: list[np.ndarray], result, path: str) -> None:
    """:func:`cosine_figure`, saved to ``path``."""
    save_figure_file(cosine_figure(mats, result), path)


def cosine_figure(mats: list[np.ndarray], result):
    """Seed 0's cosine matrix, neurons sorted by class, with the same-class prediction in the title."""
    from matplotlib.figure import Figure  # heavy: matplotlib (loaded on first use)

    cfg = result.config
    C = mats[0]
    row = result.summary[0]
    n_show = min(len(mats), 3)
    fig = Figure(figsize=(4.2 * n_show + 1, 0.22 * C.shape[0] + 2.2))
    axes: Any = fig.subplots(1, n_show, squeeze=False)  # matplotlib's Axes array (untyped here)
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
    fig.suptitle(f"cos(w_r, mu_j): {cfg.setting}, d={cfg.data.d}, k={cfg.data.k}, n={cfg.data.n}, width={cfg.model.width}, "
                 f"init_scale={cfg.model.init_scale}; same-class mean {same:.3f}, other-class mean "
                 f"{other if other is None else round(other, 3)}", fontsize=9)
    fig.tight_layout()
    return fig


def config_to_dict(cfg: RunConfig) -> dict:
    return dataclasses.asdict(cfg)


def config_from_dict(d: dict) -> RunConfig:
    model = dict(d["model"])
    if "m" in model:  # a run directory written before the width was called width
        model["width"] = model.pop("m")
    return RunConfig(setting=d["setting"], data=DataConfig(**d["data"]), model=ModelConfig(**model),
                     train=TrainConfig(**d["train"]), seeds=d["seeds"], seed0=d["seed0"])


def summary_json(result: Run) -> dict:
    cfg = result.config
    return clean({
        "setting": cfg.setting, "config": config_to_dict(cfg), "data_kind": cfg.data_kind,
        "learning_rate": cfg.learning_rate(), "seconds": result.seconds, "seeds": result.summary,
    })


def save_run(result: Run, out: str, overwrite: bool = False) -> str:
    """Write the run directory atomically; return its path."""
    check_out_dir(out, overwrite)
    parent = os.path.dirname(os.path.abspath(out))
    os.makedirs(parent, exist_ok=True)  # --out a/b/run creates a/b too (checked writable above)
    tmp = tempfile.mkdtemp(prefix=".ibcheck-run-", dir=parent)
    try:
        _write(result, tmp)
        if os.path.isdir(out):
            old = out.rstrip("/") + ".old-ibcheck"
            os.replace(out, old)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _write(result: Run, d: str) -> None:
    with atomic_file(os.path.join(d, "config.json"), "w") as f:
        json.dump(config_to_dict(result.config), f, indent=2)
    with atomic_file(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary_json(result), f, indent=2)
    write_csv(os.path.join(d, "metrics.csv"), [clean(r) for r in result.summary])
    write_csv(os.path.join(d, "trajectory.csv"), [clean(r) for r in result.trajectory])
    arrays, meta = {}, []
    for seed, net, W0 in zip(result.config.seed_list, result.networks, result.init_W):
        keys = {}
        for name, arr in net.to_arrays().items():
            arrays[f"s{seed}_{name}"] = np.asarray(arr)
            keys[name] = f"s{seed}_{name}"
        if W0 is not None:
            arrays[f"s{seed}_W0"] = W0
        meta.append({"seed": seed, "kind": net.kind, "arrays": keys, "trained": list(getattr(net, "trained", ())),
                     "activation": getattr(net, "activation", None), "init": f"s{seed}_W0" if W0 is not None else None})
    save_npz(os.path.join(d, "weights.npz"), **arrays)
    with atomic_file(os.path.join(d, "networks.json"), "w") as f:
        json.dump(meta, f, indent=2)
    if result.checkpoints:
        _write_checkpoints(result, d)
    mats = [r.get("_cosine_matrix") for r in result.summary]
    if mats and mats[0] is not None:
        cosine_heatmap([m for m in mats if m is not None], result, os.path.join(d, "cosine_matrix.png"))


def _write_checkpoints(result: Run, d: str) -> None:
    """Weights at log-spaced steps (checkpoints.npz) with their steps and losses (checkpoints.json)."""
    arrays, meta = {}, []
    loss = {(r["seed"], r["step"]): r for r in result.trajectory}
    for step, nets in result.checkpoints:
        for seed, net in zip(result.config.seed_list, nets):
            keys = {}
            for name, arr in net.to_arrays().items():
                keys[name] = f"s{seed}_t{step}_{name}"
                arrays[keys[name]] = np.asarray(arr)
            row = loss.get((seed, step), {})
            meta.append({"seed": seed, "step": step, "kind": net.kind, "arrays": keys, "trained": list(getattr(net, "trained", ())),
                         "log10_loss_sum": row.get("log10_loss_sum"), "log10_loss_mean": row.get("log10_loss_mean")})
    save_npz(os.path.join(d, "checkpoints.npz"), **arrays)
    with atomic_file(os.path.join(d, "checkpoints.json"), "w") as f:
        json.dump(clean(meta), f, indent=2)


def load_checkpoints(path: str) -> list[dict]:
    """The checkpoints of a run directory: dicts with seed, step, log10 losses and the network."""
    jpath = os.path.join(path, "checkpoints.json")
    if not os.path.isfile(jpath):
        raise InputError(f"{path} has no checkpoints: train with --checkpoints N (e.g. 12)")
    meta = read_json(jpath)
    arrays = read_npz(os.path.join(path, "checkpoints.npz"))
    out = []
    for m in meta:
        net = network_from_arrays(m["kind"], {n: arrays[k] for n, k in m["arrays"].items()}, m)
        out.append({**{k: v for k, v in m.items() if k != "arrays"}, "network": net})
    return out


def write_csv(path: str, rows: list[dict]) -> None:
    """Rows with possibly different keys (their union is the header), written atomically."""
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with atomic_file(path, "w") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow(r)


def load_run(path: str) -> Run:
    """Read a run directory written by ``ibcheck train`` (weights without pickle).

    A missing path, a file, a directory without ``config.json``, or a truncated or corrupted file
    of a run is a one-line :class:`InputError` naming the file.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"run directory {path!r} is not a path (give the directory as a string)", "path", path)
    if not os.path.exists(path):
        raise InputError(f"run directory {path!r} does not exist")
    if not os.path.isdir(path):
        raise InputError(f"{path} is a file, not a run directory (give the directory `ibcheck train --out` wrote)")
    if not os.path.isfile(os.path.join(path, "config.json")):
        raise InputError(f"{path} is not a run directory (no config.json)")
    cfg = config_from_dict(read_json(os.path.join(path, "config.json")))
    summary = read_json(os.path.join(path, "summary.json"))
    meta = read_json(os.path.join(path, "networks.json"))
    traj = []
    try:
        with open(os.path.join(path, "trajectory.csv")) as f:
            for row in csv.DictReader(f):
                traj.append({k: _num(v) for k, v in row.items()})
    except (OSError, csv.Error, UnicodeDecodeError) as err:
        raise InputError(f"{os.path.join(path, 'trajectory.csv')} cannot be read ({type(err).__name__}): the run directory is damaged") from None
    arrays = read_npz(os.path.join(path, "weights.npz"))
    nets, init = [], []
    try:
        for m in meta:
            nets.append(network_from_arrays(m["kind"], {n: arrays[k] for n, k in m["arrays"].items()}, m))
            init.append(arrays[m["init"]] if m.get("init") else None)
    except (KeyError, TypeError, ValueError) as err:
        raise InputError(f"{os.path.join(path, 'networks.json')} and weights.npz do not match ({type(err).__name__}: {err}): "
                         "the run directory is damaged") from None
    return Run(cfg, (), nets, init, summary.get("seeds", []), traj, float(summary.get("seconds") or 0.0), (), path)


def read_json(path: str):
    """A JSON file of a run; a missing, truncated or corrupted one is a one-line error naming it."""
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise InputError(f"{path} is missing: the run directory is incomplete") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(f"{path} is not valid JSON ({type(err).__name__} at {getattr(err, 'pos', '?')}): "
                         "the file is truncated or corrupted") from None


def read_npz(path: str) -> dict:
    """The arrays of an .npz file (no pickle); a missing, truncated or corrupted one is a one-line error."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise InputError(f"{path} is missing: the run directory is incomplete") from None
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as err:
        raise InputError(f"{path} cannot be read ({type(err).__name__}): the file is truncated or corrupted") from None


def _num(v: str):
    if v == "":
        return None
    try:
        f = float(v)
        return int(f) if f.is_integer() and "." not in v and "e" not in v.lower() else f
    except ValueError:
        return v
