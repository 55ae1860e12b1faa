"""Stage 4, the verdict: one rule book, applied to fits.

Takes fits and the claim's predictions and returns judgements: the rule book (:mod:`.rules`), one
bound against its measurements (:mod:`.analysis`), the KKT and reading records (:mod:`.kkt`), and the
sequential policy: the level of each look (:mod:`.sequential`) and what the next round adds
(:mod:`.rounds`).
"""
