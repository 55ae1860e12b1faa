"""The errors of ibcheck, for every layer and the API.

* :class:`InputError` (a ``ValueError``): bad input; the message names the value and the accepted
  range. The command line prints it on one line with exit status 2.
* :class:`RunFailure` (a ``RuntimeError``): a run that could not finish for a reason outside the
  input (a worker killed, out of memory); the message says what was saved and how to resume. The
  command line prints it on one line with exit status 1.

This module imports nothing from ibcheck, so every layer (``ibcheck.theory`` included) can raise them.
"""
from __future__ import annotations


class InputError(ValueError):
    """Bad user input: the message names the value and the accepted range."""


class RunFailure(RuntimeError):
    """A run that could not finish for a reason outside the input (a worker killed, out of memory)."""
