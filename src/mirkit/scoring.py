"""Scoring functions under their former name: they live in :mod:`mirkit.search.scoring`. Every
public name of that module imports from here too."""

from mirkit.search.scoring import *  # noqa: F403
from mirkit.search.scoring import __all__  # noqa: F401
