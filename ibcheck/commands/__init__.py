"""The subcommands of ``ibcheck``: each parses its flags, calls :mod:`ibcheck.api`, and prints or saves."""
