"""Exceptions the command line turns into one-line messages: bad input (exit 2), a failed run (exit 1)."""


class InputError(ValueError):
    """Bad user input: the message names the value and the accepted range."""


class RunFailure(RuntimeError):
    """A run that could not finish for a reason outside the input (a worker killed, out of memory).

    The message says what was saved and how to resume; the command line prints it on one line, exit 1.
    """
