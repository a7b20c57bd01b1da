"""Relevance feedback under its former name: it lives in :mod:`mirkit.search.feedback`. Every
public name of that module imports from here too."""

from mirkit.search import feedback as _feedback
from mirkit.search.feedback import *  # noqa: F403
from mirkit.search.feedback import __all__

# doctest.testmod(mirkit.feedback) runs the examples of what it exports.
__test__ = {"feedback": _feedback.__doc__, "Rocchio": _feedback.Rocchio}
