"""The one exception type that the command line turns into a one-line message (exit 2)."""


class InputError(ValueError):
    """Bad user input: the message names the value and the accepted range."""
