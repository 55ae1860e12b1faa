"""The errors of ibcheck, for every layer and the API.

* :class:`InputError` (a ``ValueError``): bad input; the message names the value and the accepted
  range. The command line prints it on one line with exit status 2.
* :class:`RunFailure` (a ``RuntimeError``): a run that could not finish for a reason outside the
  input (a worker killed, out of memory); the message says what was saved and how to resume. The
  command line prints it on one line with exit status 1.

This module imports nothing from ibcheck, so every layer (``ibcheck.theory`` included) can raise them.
"""
from __future__ import annotations

import re

ECHO = 200  # the most characters of a refused value a message repeats


def echo(text: object, limit: int = ECHO) -> str:
    """A refused value as a message repeats it: at most ``limit`` characters, then how long it was."""
    s = str(text)
    return s if len(s) <= limit else f"{s[:limit]}... ({len(s)} characters)"


_LONG = re.compile(r"[\[(][^\[\]()]{%d,}[\])]|\S{%d,}" % (ECHO + 1, ECHO + 1))


def shortened(message: str) -> str:
    """A message with every over-long value in it (a bracketed list, or a run of text with no space, longer than ECHO
    characters) cut by :func:`echo`. Pitfall avoided: a refused grid of 15,000 values echoed whole, a 79,222-character
    line."""
    return _LONG.sub(lambda m: echo(m.group(0)), message)


class InputError(ValueError):
    """Bad user input: the message names the value and the accepted range.

    ``parameter`` and ``value`` say what was refused, where one parameter was (None otherwise), and
    ``problem`` is the message's rest without the parameter's name (``is out of range: must be an
    integer >= 0``): the command line says it of the parameter's flag (``--steps -1 is out of range:
    ...``) from these fields, never by reading the message back."""

    def __init__(self, message: str, parameter: str | None = None, value: object = None, problem: str | None = None):
        message, problem = shortened(str(message)), (shortened(problem) if problem is not None else None)
        super().__init__(message)
        self.parameter = parameter
        self.value = value
        self.problem = problem


class StoreInUse(InputError):
    """A sweep store (``--out``) held by another comparison: the refusal of a second process, whose files
    there are the other's (so the command line removes nothing)."""


class RunFailure(RuntimeError):
    """A run that could not finish for a reason outside the input (a worker killed, out of memory)."""
