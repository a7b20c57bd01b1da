"""The manifest of an index directory (an index, a sharded index): ``manifest.json``, written last
and atomically, names the format and its version, the statistics, and the size and CRC-32C of
every file. Reading it checks all of that before anything is mapped.

The one place that parses and writes ``manifest.json``: :class:`mirkit.index.Index`,
:class:`mirkit.index.IndexWriter`, :mod:`mirkit.distributed` and the command line use it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Optional

from mirkit import _core
from mirkit._files import check_files, write_json
from mirkit._version import __version__

__all__ = ["MANIFEST", "IndexCorruptError", "IndexVersionError", "check_version", "load_manifest",
           "manifest_format", "write_manifest"]

MANIFEST = "manifest.json"

IndexCorruptError = _core.index.IndexCorruptError
IndexCorruptError.__doc__ = "An index file is missing, damaged or inconsistent (names the file)."
IndexCorruptError.__module__ = "mirkit.index"


class IndexVersionError(ValueError):
    """The index was written by a newer mirkit (a format version this one cannot read)."""

    __module__ = "mirkit.index"


def write_manifest(directory: Path, manifest: dict) -> None:
    """Writes `directory`/manifest.json durably, in one atomic step."""
    write_json(directory / MANIFEST, manifest)


def manifest_format(path) -> Optional[str]:
    """The ``format`` a manifest names (``"mirkit-index"``, ``"mirkit-sharded-index"``), or None
    when `path` holds no readable manifest (:func:`load_manifest` then says what is wrong)."""
    try:
        with open(Path(path) / MANIFEST, encoding="utf-8") as f:
            return json.load(f).get("format")
    except (OSError, ValueError, AttributeError):
        return None


def check_version(m: dict, path: Path, where: Path, version: int, what: str) -> None:
    """Raises IndexCorruptError unless manifest `m` (of file `where`) has an int
    ``format_version``, IndexVersionError if it is above `version` (what this mirkit reads)."""
    found = m.get("format_version")
    if not isinstance(found, int):
        raise IndexCorruptError(f"{where}: no format_version")
    if found > version:
        raise IndexVersionError(
            f"{path} has {what} format version {found}, written by mirkit "
            f"{m.get('mirkit_version', '?')}; this mirkit ({__version__}) reads up to version "
            f"{version}. Upgrade mirkit or rebuild the index.")


def load_manifest(path: Path, format_name: str, version: int, what: str, stat_keys: tuple,
                  check: Callable[[dict, Path], None], verify: bool) -> dict:
    """The manifest of the `what` directory `path`: its format, `version`, statistics
    (`stat_keys`: ints >= 0) and file entries checked, then ``check(manifest, where)`` (raising
    KeyError, TypeError or AttributeError if malformed), then every file's size and, with
    `verify`, its CRC-32C. Raises what :meth:`mirkit.index.Index.open` documents."""
    if not path.is_dir():
        raise FileNotFoundError(f"no index directory at {path}")
    where = path / MANIFEST
    try:
        m = json.loads(where.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise IndexCorruptError(f"{where}: missing (not an index, or an unfinished build)") \
            from None
    except (OSError, ValueError) as e:
        raise IndexCorruptError(f"{where}: unreadable ({e})") from None
    if not isinstance(m, dict) or m.get("format") != format_name:
        raise IndexCorruptError(f"{where}: not a mirkit {what} manifest")
    check_version(m, path, where, version, what)
    try:
        stats, files = m["stats"], m["files"]
        for key in stat_keys:
            if not isinstance(stats[key], int) or stats[key] < 0:
                raise KeyError(key)
        for name, info in files.items():
            if "/" in name or name.startswith(".") or not isinstance(info["bytes"], int) \
                    or not isinstance(info["crc32c"], int):
                raise KeyError(name)
        check(m, where)
    except (KeyError, TypeError, AttributeError) as e:
        raise IndexCorruptError(f"{where}: malformed manifest ({e})") from None
    check_files(path, files, verify, IndexCorruptError)
    return m
