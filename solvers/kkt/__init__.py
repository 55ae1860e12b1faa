"""KKT points of the max-margin problem (P) (LL20.def.P, LL20.def.kkt):

    minimize 1/2 ||theta||^2   subject to   q_i(theta) >= 1.

* :mod:`.jacobian`: margins and their (Clarke) gradients for two-layer ReLU networks;
* :mod:`.certificate`: is a given network a KKT point? a number, not an impression;
* :mod:`.search`: multi-start SLSQP on (P), each result certified, de-duplicated;
* :mod:`.global_opt`: the global optimum on small instances (convex reformulation) and the
  dual check of global optimality.
"""
