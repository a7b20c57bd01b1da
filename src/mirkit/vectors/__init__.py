"""Vectors (see :mod:`mirkit.vectors.lsh`)."""

from mirkit.vectors import lsh
from mirkit.vectors.lsh import *  # noqa: F403
from mirkit.vectors.lsh import __all__

__test__ = {name: getattr(lsh, name) for name in __all__ if callable(getattr(lsh, name))}
