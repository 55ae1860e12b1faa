"""ibcheck's empirical layer (torch): data, models, the batched GD trainer, measurements.

Importing this package is light; torch is loaded by the submodules that need it.
"""


def load_run(path: str):
    """Read a run directory written by ``ibcheck train`` (see :mod:`simulate.substrate.rundir`)."""
    from ibcheck.simulate.substrate.rundir import load_run as _load  # heavy: torch (loaded on first use)

    return _load(path)


__all__ = ["load_run"]
