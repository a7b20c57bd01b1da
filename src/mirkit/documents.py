"""Document input under its former name: it lives in :mod:`mirkit.ingest` now (this name is for
the document store to come). Every public name of :mod:`mirkit.ingest` imports from here too."""

from mirkit import ingest
from mirkit.ingest import *  # noqa: F403
from mirkit.ingest import __all__

# doctest.testmod(mirkit.documents) runs the examples of what it exports.
__test__ = {"ingest": ingest.__doc__,
            **{name: getattr(ingest, name) for name in __all__ if callable(getattr(ingest, name))}}
