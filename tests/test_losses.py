import math

import mpmath
import pytest
import torch

from ibcheck.simulate.substrate.losses import grad_log_loss_wrt_Q, log_loss_inverse, log_softplus, log_total_loss

pytestmark = pytest.mark.usefixtures("float64_default")


def direct_loss(Q, loss):
    z = torch.logsumexp(-Q, -1)
    return (torch.exp(z) if loss == "exp" else torch.nn.functional.softplus(z)).sum(-1)


@pytest.mark.parametrize("loss", ["logistic", "exp"])
@pytest.mark.parametrize("K", [1, 3])
def test_log_loss_equals_direct_where_representable(loss, K):
    Q = torch.randn(4, 30, K, generator=torch.Generator().manual_seed(0)) * 5
    ours = log_total_loss(Q, loss, "sum")
    assert torch.allclose(ours, torch.log(direct_loss(Q, loss)), rtol=1e-12, atol=1e-12)
    mean = log_total_loss(Q, loss, "mean")
    assert torch.allclose(mean, torch.log(direct_loss(Q, loss) / 30), rtol=1e-12)


@pytest.mark.parametrize("loss", ["logistic", "exp"])
@pytest.mark.parametrize("K", [1, 3])
def test_grad_log_loss_equals_autograd_where_representable(loss, K):
    Q = (torch.randn(2, 25, K, generator=torch.Generator().manual_seed(1)) * 3 + 2).requires_grad_(True)
    torch.log(direct_loss(Q, loss)).sum().backward()
    _, g = grad_log_loss_wrt_Q(Q.detach(), loss)
    assert torch.allclose(g, Q.grad, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("loss", ["logistic", "exp"])
def test_log_loss_is_exact_at_log10_minus_1000(loss):
    # Margins near 2303 give per-sample losses of about 1e-1000, far below 1e-308.
    q = torch.tensor([2303.0, 2310.0, 2400.0]).reshape(1, 3, 1)
    logL, g = grad_log_loss_wrt_Q(q, loss)
    assert torch.isfinite(logL).all() and torch.isfinite(g).all()
    with mpmath.workdps(50):
        if loss == "exp":
            exact = mpmath.log(sum(mpmath.exp(-mpmath.mpf(v)) for v in (2303, 2310, 2400)))
        else:
            exact = mpmath.log(sum(mpmath.log1p(mpmath.exp(-mpmath.mpf(v))) for v in (2303, 2310, 2400)))
        w = [mpmath.exp(-mpmath.mpf(v)) for v in (2303, 2310, 2400)]
        share = [float(x / sum(w)) for x in w]
    assert float(logL) / math.log(10) == pytest.approx(float(exact) / math.log(10), rel=1e-14)
    assert float(logL) / math.log(10) < -1000
    # The gradient of log L is the (exact) softmax of -q: it does not underflow to 0.
    assert -g[0, :, 0].numpy() == pytest.approx(share, rel=1e-10)


def test_log_softplus_series_matches_mpmath_and_has_finite_gradient():
    z = torch.tensor([-5000.0, -800.0, -40.0, -29.0, 0.0, 30.0], requires_grad=True)
    v = log_softplus(z)
    v.sum().backward()
    assert torch.isfinite(v).all() and torch.isfinite(z.grad).all()
    for zi, vi in zip(z.detach().tolist(), v.detach().tolist()):
        with mpmath.workdps(40):
            exact = float(mpmath.log(mpmath.log1p(mpmath.exp(zi))))
        assert vi == pytest.approx(exact, rel=1e-13, abs=1e-13)


def test_loss_inverse_formulas():
    for loss in ("logistic", "exp"):
        for Lsum in (0.5, 1e-3, 1e-30):
            logL = torch.tensor([math.log(Lsum)])
            inv = float(log_loss_inverse(logL, loss))
            expected = -math.log(Lsum) if loss == "exp" else -math.log(math.expm1(Lsum))
            assert inv == pytest.approx(expected, rel=1e-12)
    assert float(log_loss_inverse(torch.tensor([-3000.0]), "logistic")) == pytest.approx(3000.0)
