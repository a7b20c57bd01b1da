"""Instruction-set selection and the build report behind ``mirkit info``."""

from __future__ import annotations

import contextlib
import os
import platform
import warnings
from typing import Iterator

from mirkit import _core
from mirkit._version import __version__

__all__ = ["info", "runnable_simd_levels", "set_simd_level", "simd_level", "simd_limit", "SIMD_LEVELS"]

#: Instruction-set levels, lowest first. ``scalar`` is the portable reference path.
SIMD_LEVELS: tuple[str, ...] = tuple(_core.simd_levels)

_env = os.environ.get("MIRKIT_SIMD")
if _env is not None and _env not in SIMD_LEVELS:
    warnings.warn(
        f"MIRKIT_SIMD={_env!r} is not one of {SIMD_LEVELS}; using the detected level",
        RuntimeWarning,
        stacklevel=2,
    )


def runnable_simd_levels() -> tuple[str, ...]:
    """Levels this CPU can run, lowest (``scalar``) first."""
    return SIMD_LEVELS[: SIMD_LEVELS.index(_core.detected_simd_level()) + 1]


def simd_level() -> str:
    """The instruction-set level kernels use now (detected, capped by ``MIRKIT_SIMD``)."""
    return _core.simd_level()


def set_simd_level(level: str) -> str:
    """Cap the instruction-set level every kernel uses; returns the level now in force.

    Parameters
    ----------
    level : str
        One of :data:`SIMD_LEVELS`. A level above what the CPU supports is capped to the
        detected one. The setting is process-wide (the environment variable ``MIRKIT_SIMD``
        sets it at import).

    Raises
    ------
    ValueError
        If `level` is not a known level name.

    Examples
    --------
    >>> import mirkit
    >>> mirkit.set_simd_level("scalar")
    'scalar'
    >>> _ = mirkit.set_simd_level("avx512vbmi")  # back to the best the CPU has
    """
    if level not in SIMD_LEVELS:
        raise ValueError(f"level must be one of {SIMD_LEVELS}, got {level!r}")
    return _core.set_simd_level(level)


@contextlib.contextmanager
def simd_limit(level: str) -> Iterator[str]:
    """Context manager that caps the SIMD level, then restores the previous one.

    Not thread-safe: the cap is process-wide. Meant for tests and benchmarks.

    Examples
    --------
    >>> import mirkit
    >>> with mirkit.simd_limit("scalar") as active:
    ...     active
    'scalar'
    """
    previous = simd_level()
    try:
        yield set_simd_level(level)
    finally:
        _core.set_simd_level(previous)


def info() -> dict:
    """Version, compiler and the instruction set each kernel family uses now.

    Examples
    --------
    >>> import mirkit
    >>> sorted(mirkit.info())
    ['compiler', 'cpu_features', 'detected_simd_level', 'kernels', 'platform', 'python', 'simd_level', 'version']
    """
    from mirkit import codecs

    kernels = {f"codecs.{name}": codecs.get(name).kernel_level for name in codecs.available()}
    kernels["codecs.bp128.decode_sorted"] = _core.codecs.bp128_decode_sorted_level()
    kernels["codecs.elias_fano.next_geq"] = _core.codecs.elias_fano_query_level()
    kernels.update({f"image.sift.{part}": level
                    for part, level in _core.image.sift_levels().items()})
    kernels["image.filters"] = _core.image.filter_level()
    kernels["query.bm25_block"] = _core.query.bm25_block_level()
    kernels["vectors.distances"] = _core.vectors.kernel_level()
    kernels["vectors.lsh_rerank"] = _core.vectors.lsh_rerank_level()
    kernels["text.cdist_filter"] = _core.text.filter_level()
    kernels["late.maxsim"] = _core.late.kernel_level()
    kernels["attention.float32"] = _core.attention.kernel(False)
    kernels["attention.bfloat16"] = _core.attention.kernel(True)
    return {
        "version": __version__,
        "compiler": _core.compiler,
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "detected_simd_level": _core.detected_simd_level(),
        "simd_level": _core.simd_level(),
        "cpu_features": sorted(k for k, v in _core.cpu_features().items() if v),
        "kernels": kernels,
    }
