"""Saving and loading of vector models and indexes (k-means, LSH), one format for all: a directory
of ``.npy`` arrays plus ``meta.json`` (format name and version, mirkit version, constructor
parameters, the arrays, and the size and CRC-32C of every file). It is written as an index is:
into a temporary sibling, synced, then renamed into place (replacing what was at the path), so a
failed save leaves the old directory or nothing. Pickling reuses the same arrays."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Optional

import numpy as np

from mirkit._files import check_files, fsync_dir, move_into_place, temp_sibling, write_file
from mirkit._files import write_json
from mirkit._version import __version__

__all__ = ["Saved", "load", "save"]

FORMAT_VERSION = 1


def save(path, kind: str, params: dict, arrays: dict, extra: Optional[dict] = None) -> None:
    """Writes `arrays` as ``<name>.npy`` files and meta.json to directory `path`, atomically."""
    path = Path(path)
    path.absolute().parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_sibling(path)
    tmp.mkdir()
    try:
        files = {}
        for name, arr in arrays.items():
            def write(f, arr=arr):
                np.save(f, arr, allow_pickle=False)
            files[f"{name}.npy"] = write_file(tmp / f"{name}.npy", write)
        meta = {"format": kind, "format_version": FORMAT_VERSION, "mirkit_version": __version__,
                "params": params, "arrays": sorted(arrays), **(extra or {}), "files": files}
        write_json(tmp / "meta.json", meta)
        fsync_dir(tmp)
        move_into_place(tmp, path, overwrite=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def load(path, kind: str, mmap: bool = False, verify: bool = True) -> tuple[dict, dict]:
    """``(meta, arrays)`` of a directory written by :func:`save`: the format checked, then every
    file's size and, with `verify`, its CRC-32C (saves older than the checksums have none)."""
    path = Path(path)
    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no meta.json (not a saved {kind})") from None
    if meta.get("format") != kind:
        raise ValueError(f"{path}: holds a {meta.get('format')!r}, not a {kind!r}")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path}: format version {meta.get('format_version')} is not "
                         f"{FORMAT_VERSION}")
    if "files" in meta:
        unlisted = sorted(f"{name}.npy" for name in meta["arrays"]
                          if f"{name}.npy" not in meta["files"])
        if unlisted:
            raise ValueError(f"{path}: meta.json lists no size and checksum for {unlisted}")
        check_files(path, meta["files"], verify, ValueError)
    arrays = {name: np.load(path / f"{name}.npy", mmap_mode="r" if mmap else None,
                            allow_pickle=False) for name in meta["arrays"]}
    return meta, arrays


class Saved:
    """``save``/``load`` and pickling through :func:`save` and :func:`load`. Subclasses give
    `_kind`, `_params()` (their constructor's keywords), `_arrays()` (None when there is
    nothing to save yet), `_extra()` (more meta.json entries) and ``_restore(arrays, meta)``."""

    _kind = ""

    def _extra(self) -> dict:
        return {}

    def save(self, path) -> None:
        """Write to directory `path` (.npy arrays + meta.json with their checksums), atomically:
        a temporary sibling renamed into place, replacing what was there."""
        save(path, self._kind, self._params(), self._arrays(), self._extra())

    @classmethod
    def load(cls, path, mmap: bool = False, *, verify: bool = True):
        """Read what :meth:`save` wrote (`mmap`: map the arrays, do not read them; `verify`:
        check every file's CRC-32C)."""
        meta, arrays = load(path, cls._kind, mmap, verify)
        obj = cls(**meta["params"])
        obj._restore(arrays, meta)
        return obj

    def __getstate__(self) -> dict:
        state = {"params": self._params()}
        arrays = self._arrays()
        if arrays is not None:
            state["arrays"], state["meta"] = arrays, self._extra()
        return state

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state["params"])
        if "arrays" in state:
            self._restore(state["arrays"], state["meta"])
