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
if _env is not None and _env not in (*SIMD_LEVELS, "auto"):
    warnings.warn(
        f"MIRKIT_SIMD={_env!r} is not one of {SIMD_LEVELS} or 'auto'; using the detected level",
        RuntimeWarning,
        stacklevel=2,
    )


def _valid_dispatch_cpu(value: str) -> bool:
    parts = value.split()
    try:
        return len(parts) == 3 and all(int(p, 0) >= 0 for p in parts[1:])
    except ValueError:
        return False


_fake_cpu = os.environ.get("MIRKIT_DISPATCH_CPU")
if _fake_cpu is not None and not _valid_dispatch_cpu(_fake_cpu):
    warnings.warn(
        f"MIRKIT_DISPATCH_CPU={_fake_cpu!r} is not '<vendor> <family> <model>'; ignored",
        RuntimeWarning,
        stacklevel=2,
    )

# Kernel families (keys of info()["kernels"]) that the dispatch rule knows by name
# (cpp/core/dispatch_rules.cpp); the others take the widest path they have.
_RULE_FAMILIES = {"codecs.stream_vbyte": "codecs.stream_vbyte.decode",
                  "codecs.vbyte": "codecs.vbyte.decode"}


def runnable_simd_levels() -> tuple[str, ...]:
    """Levels this CPU can run, lowest (``scalar``) first."""
    return SIMD_LEVELS[: SIMD_LEVELS.index(_core.detected_simd_level()) + 1]


def simd_level() -> str:
    """The instruction-set level kernels use now (detected, capped by ``MIRKIT_SIMD``)."""
    return _core.simd_level()


def set_simd_level(level: str) -> str:
    """Force the instruction-set level every kernel uses; returns the level now in force.

    By default ("auto") each kernel family takes the fastest path this CPU supports, which is
    the widest one except where the dispatch rule knows better (on AMD Zen 4, the Stream
    VByte decoder runs its AVX2 path: see ``mirkit info``). A forced level turns those rules
    off: every family takes its widest path at or below `level`, so any path can be run and
    tested on any CPU that supports it.

    Parameters
    ----------
    level : str
        One of :data:`SIMD_LEVELS`, or ``"auto"`` for the default. A level above what the CPU
        supports is capped to the detected one. The setting is process-wide (the environment
        variable ``MIRKIT_SIMD`` sets it at import).

    Raises
    ------
    ValueError
        If `level` is not a known level name.

    Examples
    --------
    >>> import mirkit
    >>> mirkit.set_simd_level("scalar")
    'scalar'
    >>> _ = mirkit.set_simd_level("auto")  # back to the default dispatch
    """
    if level == "auto":
        return _core.unset_simd_level()
    if level not in SIMD_LEVELS:
        raise ValueError(f"level must be one of {SIMD_LEVELS} or 'auto', got {level!r}")
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
    previous = simd_level() if _core.simd_level_forced() else "auto"
    try:
        yield set_simd_level(level)
    finally:
        set_simd_level(previous)


def info() -> dict:
    """Version, compiler and the instruction set each kernel family uses now.

    Examples
    --------
    >>> import mirkit
    >>> sorted(mirkit.info())
    ['compiler', 'cpu', 'cpu_features', 'detected_simd_level', 'dispatch', 'kernels', 'platform', 'python', 'simd_forced', 'simd_level', 'version']

    ``kernels`` maps each kernel family to the path it runs now, ``dispatch`` says why
    (the widest path, a forced level, or a rule for this CPU).
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
    kernels["dedup.minhash"] = _core.dedup.minhash_level()
    kernels["late.maxsim"] = _core.late.kernel_level()
    kernels["late.maxsim.bfloat16"] = _core.late.kernel_level(True)
    kernels["attention.float32"] = _core.attention.kernel(False)
    kernels["attention.bfloat16"] = _core.attention.kernel(True)
    # avx512bf16 is an extension of the top level, not a level of its own.
    dispatch = {name: _core.dispatch_reason(_RULE_FAMILIES.get(name, "other"),
                                            _core.simd_level() if level == "avx512bf16" else level)
                for name, level in kernels.items()}
    cpu = _core.cpu_description()
    return {
        "version": __version__,
        "compiler": _core.compiler,
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "detected_simd_level": _core.detected_simd_level(),
        "simd_level": _core.simd_level(),
        "simd_forced": _core.simd_level_forced(),
        "cpu": f"{cpu['vendor'] or 'unknown'} family {cpu['family']:#x} model {cpu['model']:#x}",
        "cpu_features": sorted(k for k, v in _core.cpu_features().items() if v),
        "kernels": kernels,
        "dispatch": dispatch,
    }
