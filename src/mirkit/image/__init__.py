"""Images: separable filters with scipy.ndimage's and OpenCV's borders
(:mod:`mirkit.image.filters`, whose documentation gives the dtypes and borders) and SIFT
keypoints and descriptors built on them (``mirkit.image._sift``). Image retrieval over the
inverted index, which also needs vectors and search, is :mod:`mirkit.image_search`."""

from mirkit.image import filters
from mirkit.image.filters import *  # noqa: F403
from mirkit.image.filters import __all__

# doctest.testmod(mirkit.image) runs the examples of what it exports.
__test__ = {name: getattr(filters, name) for name in __all__ if callable(getattr(filters, name))}
