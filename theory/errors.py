"""The errors of the theory layer are ibcheck's own (:mod:`ibcheck.errors`), re-exported here."""
from ibcheck.errors import InputError, RunFailure, StoreInUse

__all__ = ["InputError", "RunFailure", "StoreInUse"]
