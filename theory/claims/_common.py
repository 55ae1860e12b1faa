"""Shared shorthand for the claim modules."""
from __future__ import annotations

import sympy as sp

from ..variables import Variable, symbol

SEED_LI_ITCS = "000_c1c430d6ad3ccfd8.txt"      # J. Li, iTCS 2024 talk (feature averaging; FVBS23 Thm 4.2 slide)
SEED_LI_CSML = "001_ea57924c2aa06e80.txt"      # J. Li, CSML 2024 talk (implicit bias and robustness)
SEED_LPLL_TALK = "002_ad40139cfca45c0d.txt"    # Li, Pan, Lyu, Li ICLR 2025 talk
SEED_WEINBERGER = "003_d46d4a56b1a8aba5.txt"   # EPFL candidacy exam (BCGT21, VYS22, SSTTM18)
SEED_FVBS_PAPER = "004_5e33692c6dd2347f.txt"   # FVBS23 paper text, formulas stripped

S = symbol
log = sp.log
sqrt = sp.sqrt
exp = sp.exp


def real(name: str, description: str, low=None, high=None, low_open=False, high_open=False, tends_to="oo") -> Variable:
    return Variable(name, description, integer=False, low=low, high=high, low_open=low_open, high_open=high_open, tends_to=tends_to)


def integer(name: str, description: str, low=None, high=None) -> Variable:
    return Variable(name, description, integer=True, low=low, high=high)


def unit(name: str, description: str) -> Variable:
    """A variable in the open interval (0, 1), asymptotic towards 0."""
    return Variable(name, description, low=0, high=1, low_open=True, high_open=True, tends_to="0")
