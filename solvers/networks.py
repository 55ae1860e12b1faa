"""Plain network objects: parameters, forward pass, margins, homogeneity degree.

These are numpy (float64) objects so that the KKT and radius tools of ``solvers`` can use
them without importing ``simulate``; the trainer in ``simulate`` produces one per seed.
Every network has the same small API:

* ``forward(X) -> (N,)`` (or ``(N, k)`` for the multiclass network);
* ``margins(X, y) -> (N,)``: ``q_i = y_i f(x_i)``, or ``f_{y_i} - max_{j != y_i} f_j`` for k classes;
* ``degree``: the homogeneity degree L in the *trained* parameters (None if not homogeneous);
* ``params() -> flat vector`` of the trained parameters and ``with_params(theta)``;
* ``to_arrays()`` / ``from_arrays()``: plain arrays for saving without pickle.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ibcheck.errors import InputError


def relu(z: np.ndarray) -> np.ndarray:
    return np.maximum(z, 0.0)


ACTIVATIONS = {
    "relu": relu,
    "softplus": lambda z: np.logaddexp(0.0, z),
    "tanh": np.tanh,
    "gelu": lambda z: 0.5 * z * (1.0 + _erf(z / np.sqrt(2.0))),
}


def _erf(z):
    from scipy.special import erf  # heavy: scipy (loaded on first use)

    return erf(z)


@dataclass(frozen=True)
class TwoLayerReLU:
    """``f(x) = sum_j a_j ReLU(<w_j, x> + b_j)``.

    ``trained`` names the trained parameter blocks: ``("W", "b", "a")`` for the all-trained
    network of VYS22/FVBS23 (degree 2 with or without hidden biases), ``("W", "b")`` for
    LPLL25's network with the second layer fixed at +-1/m (degree 1). ``b`` is None for a
    bias-free network.
    """

    W: np.ndarray
    a: np.ndarray
    b: np.ndarray | None = None
    trained: tuple[str, ...] = ("W", "b", "a")
    kind: str = "two-layer"

    def __post_init__(self):
        if self.W.ndim != 2 or self.a.shape != (self.W.shape[0],):
            raise InputError(f"TwoLayerReLU: W must be (m, d) and a (m,), got {self.W.shape} and {self.a.shape}")
        if self.b is not None and self.b.shape != (self.W.shape[0],):
            raise InputError(f"TwoLayerReLU: b must be (m,), got {self.b.shape}")

    @property
    def width(self) -> int:
        return self.W.shape[0]

    @property
    def dim(self) -> int:
        return self.W.shape[1]

    @property
    def blocks(self) -> tuple[str, ...]:
        return tuple(t for t in self.trained if not (t == "b" and self.b is None))

    @property
    def degree(self) -> int:
        """Homogeneity degree in the trained parameters: 2 if ``a`` is trained, else 1."""
        return 2 if "a" in self.trained else 1

    def preactivations(self, X: np.ndarray) -> np.ndarray:
        Z = X @ self.W.T
        return Z + self.b if self.b is not None else Z

    def forward(self, X: np.ndarray) -> np.ndarray:
        return relu(self.preactivations(X)) @ self.a

    def margins(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return y * self.forward(X)

    def params(self) -> np.ndarray:
        return np.concatenate([getattr(self, n).ravel() for n in self.blocks])

    def with_params(self, theta: np.ndarray) -> "TwoLayerReLU":
        out, i = {}, 0
        for n in self.blocks:
            arr = getattr(self, n)
            out[n] = np.asarray(theta[i:i + arr.size], dtype=float).reshape(arr.shape)
            i += arr.size
        if i != len(theta):
            raise InputError(f"expected {i} parameters, got {len(theta)}")
        return replace(self, **out)

    def to_arrays(self) -> dict[str, np.ndarray]:
        out = {"W": self.W, "a": self.a}
        if self.b is not None:
            out["b"] = self.b
        return out


@dataclass(frozen=True)
class LinearClassifier:
    """``f(x) = <w, x>`` (+ b when a bias is given); degree 1 (bias-free)."""

    w: np.ndarray
    b: float | None = None
    kind: str = "linear"

    @property
    def degree(self) -> int | None:
        return 1 if self.b is None else None

    def forward(self, X: np.ndarray) -> np.ndarray:
        return X @ self.w + (self.b or 0.0)

    def margins(self, X, y):
        return y * self.forward(X)

    def params(self) -> np.ndarray:
        return self.w.copy() if self.b is None else np.append(self.w, self.b)

    def with_params(self, theta):
        if self.b is None:
            return replace(self, w=np.asarray(theta, float).copy())
        return replace(self, w=np.asarray(theta[:-1], float).copy(), b=float(theta[-1]))

    def to_arrays(self):
        return {"w": self.w} if self.b is None else {"w": self.w, "b": np.array([self.b])}


@dataclass(frozen=True)
class MulticlassReLU:
    """k outputs, ``h`` ReLU neurons per class: ``f_j(x) = (1/h) sum_r ReLU(<w_{j,r}, x>)``.

    ``W`` is ``(k*h, d)``, neurons of class j in rows ``j*h .. j*h + h - 1``. Degree 1 in W.
    ``readout(J_plus)`` gives LPLL25.thm.5_5's binary read-out ``sum_{J+} f_j - sum_{J-} f_j``.
    """

    W: np.ndarray
    k: int
    kind: str = "multiclass"

    @property
    def h(self) -> int:
        return self.W.shape[0] // self.k

    @property
    def degree(self) -> int:
        return 1

    @property
    def neuron_class(self) -> np.ndarray:
        return np.repeat(np.arange(self.k), self.h)

    def forward(self, X: np.ndarray) -> np.ndarray:
        act = relu(X @ self.W.T)  # (N, k*h)
        return act.reshape(len(X), self.k, self.h).mean(axis=2)

    def margins(self, X, y):
        F = self.forward(X)
        idx = np.arange(len(X))
        own = F[idx, y]
        F2 = F.copy()
        F2[idx, y] = -np.inf
        return own - F2.max(axis=1)

    def readout(self, J_plus) -> TwoLayerReLU:
        sign = np.where(np.isin(self.neuron_class, np.asarray(J_plus)), 1.0, -1.0)
        return TwoLayerReLU(W=self.W.copy(), a=sign / self.h, b=None, trained=("W",), kind="multiclass-readout")

    def params(self):
        return self.W.ravel().copy()

    def with_params(self, theta):
        return replace(self, W=np.asarray(theta, float).reshape(self.W.shape))

    def to_arrays(self):
        return {"W": self.W, "k": np.array([self.k])}


@dataclass(frozen=True)
class RandomNet:
    """BCGT21's ``f(x) = k^(-1/2) sum_l a_l act(<w_l, x>)``, untrained."""

    W: np.ndarray
    a: np.ndarray
    activation: str = "relu"
    kind: str = "random-net"

    @property
    def degree(self) -> int | None:
        return 1 if self.activation == "relu" else None

    def forward(self, X):
        act = ACTIVATIONS[self.activation](X @ self.W.T)
        return act @ self.a / np.sqrt(self.W.shape[0])

    def margins(self, X, y):
        return y * self.forward(X)

    def params(self):
        return self.W.ravel().copy()

    def with_params(self, theta):
        return replace(self, W=np.asarray(theta, float).reshape(self.W.shape))

    def to_arrays(self):
        return {"W": self.W, "a": self.a}


Network = TwoLayerReLU | LinearClassifier | MulticlassReLU | RandomNet


def classifier_normalized(net):
    """The same classifier ``sign f`` with its scale removed, for the radius solvers.

    For a two-layer ReLU network each neuron's ``(w_j, b_j)`` gets unit norm (its ``a_j`` takes the
    factor: ReLU is positively homogeneous, so f is unchanged), then ``a`` gets unit largest entry
    (f is scaled by a positive constant). Other networks scale their output layer (``a`` or ``w``).
    Pitfall avoided: the solvers' absolute tolerances against margins near 1e-9 made a network
    whose output layer was scaled by 1e-10 report a smaller "optimal" radius than the same
    classifier at unit scale."""
    if isinstance(net, TwoLayerReLU):
        Wt = np.concatenate([net.W, net.b[:, None]], axis=1) if net.b is not None else net.W
        norms = np.linalg.norm(Wt, axis=1)
        live = norms > 0
        W, a = net.W.copy(), net.a * np.where(live, norms, 0.0)
        W[live] /= norms[live, None]
        b = None if net.b is None else np.where(live, net.b / np.where(live, norms, 1.0), 0.0)
        top = float(np.abs(a).max(initial=0.0))
        return replace(net, W=W, a=a / top if top > 0 else a, b=b)
    if isinstance(net, RandomNet):
        top = float(np.abs(net.a).max(initial=0.0))
        return replace(net, a=net.a / top) if top > 0 else net
    if isinstance(net, LinearClassifier):
        nw = float(np.linalg.norm(net.w))
        return replace(net, w=net.w / nw, b=None if net.b is None else net.b / nw) if nw > 0 else net
    return net


def normalized_margin(net, X: np.ndarray, y: np.ndarray) -> float:
    """LL20.def.normalized_margin: ``min_i q_i / ||theta||^L`` (trained parameters)."""
    L = net.degree
    if L is None:
        raise InputError(f"{net.kind} network is not homogeneous: no normalized margin")
    return float(net.margins(X, y).min() / np.linalg.norm(net.params()) ** L)


def network_from_arrays(kind: str, arrays: dict[str, np.ndarray], meta: dict) -> Network:
    """Rebuild a network saved with ``to_arrays`` plus its JSON ``meta``."""
    if kind in ("two-layer", "fa", "multiclass-readout"):
        return TwoLayerReLU(W=arrays["W"], a=arrays["a"], b=arrays.get("b"), trained=tuple(meta["trained"]), kind=kind)
    if kind == "linear":
        return LinearClassifier(w=arrays["w"], b=float(arrays["b"][0]) if "b" in arrays else None)
    if kind == "multiclass":
        return MulticlassReLU(W=arrays["W"], k=int(arrays["k"][0]))
    if kind == "random-net":
        return RandomNet(W=arrays["W"], a=arrays["a"], activation=meta.get("activation", "relu"))
    raise InputError(f"unknown network kind {kind!r}")
