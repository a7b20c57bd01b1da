"""Evaluation (see :mod:`mirkit.evaluation.measures`)."""

from mirkit.evaluation import measures
from mirkit.evaluation.measures import *  # noqa: F403
from mirkit.evaluation.measures import __all__
