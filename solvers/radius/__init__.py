"""Robustness radii of two-layer ReLU and linear classifiers, bracketed from both sides.

The radius of a point is ``r(x) = inf { ||delta|| : y f(x + delta) <= 0 }``. The tie rule:
``f(x) = 0`` counts as misclassified, so a point with ``y f(x) <= 0`` has radius 0. (A public
reproduction of the feature-averaging paper never saw its robust accuracy reach 0 because
its code predicted +1 at ``f(x) = 0``.)

* :mod:`.ray`: the exact flip radius along given directions, from the breakpoints;
* :mod:`.universal`: the universal directions of FVBS23, LPLL25 and VYS22, and flip rates;
* :mod:`.certified`: lower bounds (SOK17's margin / Lipschitz, and a linear relaxation);
* :mod:`.attack`: upper bounds from foolbox's DeepFool and DDN, verified and refined;
* :mod:`.exact`: the exact radius (SCIP mixed-integer QP, or activation-region enumeration);
* :mod:`.linear`: closed forms for linear classifiers (l2 and l_inf);
* :mod:`.constructions`: the robust networks of FVBS23.thm.4_1 and LPLL25.prop.robust_exists;
* :mod:`.curves`: robust accuracy against eps, from the radii.
"""
from .ray import ray_flip_radius
from .universal import flip_rate, universal_directions, universal_radius

__all__ = ["ray_flip_radius", "universal_directions", "universal_radius", "flip_rate"]
