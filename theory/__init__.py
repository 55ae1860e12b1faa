"""ibcheck's symbolic layer: claims, growth exponents, log-space evaluation, applicability
windows and the claim graph. Never imports torch, solvers or simulate."""
from .claim import Bound, Claim, Hypothesis
from .describe import Bounds, bounds_at, describe
from .errors import InputError
from .growth import GrowthRelation
from .growth import compare as compare_growth
from .registry import ClaimList, all_claims, claim_ids, get_claim, suggest
from .variables import Variable
from .window import Window, applicability_window

__all__ = ["Bound", "Bounds", "Claim", "ClaimList", "GrowthRelation", "Hypothesis", "InputError", "Variable", "Window", "all_claims",
           "applicability_window", "bounds_at", "claim_ids", "compare_growth", "describe", "get_claim", "suggest"]
