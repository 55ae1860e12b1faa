"""ibcheck's symbolic layer: claims, growth exponents, log-space evaluation, applicability
windows and the claim graph. Never imports torch, solvers or simulate."""
from .claim import Bound, Claim, Hypothesis
from .errors import InputError
from .registry import all_claims, claim_ids, get_claim, suggest
from .variables import Variable

__all__ = ["Bound", "Claim", "Hypothesis", "InputError", "Variable", "all_claims", "claim_ids", "get_claim", "suggest"]
