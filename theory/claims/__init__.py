"""The claim modules, one per paper. ``ALL`` lists every claim of THEORY.md."""
from . import bubeck2021, frei2023, li2025, lyu2020, min2024, rosset2004, schmidt2018, sok2017, soudry2018, vardi2022

MODULES = (lyu2020, soudry2018, rosset2004, sok2017, frei2023, li2025, min2024, vardi2022, bubeck2021, schmidt2018)
ALL = [c for mod in MODULES for c in mod.CLAIMS]
