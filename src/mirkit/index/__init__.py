"""Compressed inverted index (see :mod:`mirkit.index.reader`)."""

from mirkit.index import reader
from mirkit.index.reader import *  # noqa: F403
from mirkit.index.reader import BLOCK_SIZE, __all__

__test__ = {"reader": reader, **{name: getattr(reader, name) for name in __all__
                                 if callable(getattr(reader, name))}}
