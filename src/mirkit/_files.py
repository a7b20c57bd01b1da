"""Durable, atomic writes and file checksums, for every format mirkit writes to disk (indexes,
sharded indexes, image indexes, saved vector models, run files).

A file or a directory is written under a hidden temporary name next to its target, synced, and
renamed into place: a reader finds the old version or the new one, never half of one, and a
crash or an exception leaves nothing that opens. A directory's manifest lists the size and
CRC-32C of each of its files (:func:`write_file`, :func:`check_files`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from pathlib import Path

from mirkit import _core

__all__ = ["CommitOnExit", "atomic_output", "check_files", "file_entry", "fsync_dir",
           "move_into_place", "temp_sibling", "write_file", "write_json"]


def temp_sibling(path) -> Path:
    """A fresh hidden name next to `path` (``.name.tmp-<random>``) to build it under."""
    path = Path(path)
    return path.absolute().parent / f".{path.name}.tmp-{uuid.uuid4().hex[:12]}"


def fsync_dir(path) -> None:
    """Makes the entries of directory `path` (new names, renames) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def move_into_place(tmp: Path, path: Path, overwrite: bool) -> None:
    """Renames the finished directory `tmp` to `path` (replacing it if `overwrite`)."""
    old = None
    if path.exists():
        if not overwrite:
            raise FileExistsError(f"{path} exists; pass overwrite=True to replace it")
        old = tmp.with_name(tmp.name + "-old")
        os.replace(path, old)
    os.replace(tmp, path)
    fsync_dir(path.absolute().parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_json(path: Path, data: dict) -> None:
    """Writes `data` to the JSON file `path` durably, in one atomic step."""
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


@contextlib.contextmanager
def atomic_output(path):
    """A text file written under a temporary name, synced and renamed onto `path` when the
    block succeeds, removed when it fails: readers never see half a file."""
    tmp = temp_sibling(path)
    try:
        with open(tmp, "w", encoding="utf-8") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def file_entry(path) -> dict:
    """The manifest entry of a file: its size and CRC-32C."""
    return {"bytes": os.path.getsize(path), "crc32c": _core.index.file_crc32c(str(path))}


def write_file(path: Path, content) -> dict:
    """Writes `content` to `path` and syncs it; returns its manifest entry (:func:`file_entry`).
    `content` is bytes, or a callable that writes into the open binary file."""
    with open(path, "wb") as f:
        if callable(content):
            content(f)
        else:
            f.write(content)
        f.flush()
        os.fsync(f.fileno())
    return file_entry(path)


def check_files(directory: Path, files: dict, verify: bool, error: type) -> None:
    """Checks that every file a manifest lists (``{name: {"bytes", "crc32c"}}``) is in
    `directory` with its size and, with `verify`, its CRC-32C; raises `error` naming the file."""
    for name, info in files.items():
        file = directory / name
        if not file.is_file():
            raise error(f"{file}: missing")
        size = file.stat().st_size
        if size != info["bytes"]:
            raise error(f"{file}: {size} bytes, the manifest says {info['bytes']}")
        if verify and _core.index.file_crc32c(str(file)) != info["crc32c"]:
            raise error(f"{file}: checksum mismatch (the file is damaged)")


class CommitOnExit:
    """A writer as a context manager: leaving the block normally commits, an exception
    aborts (the writers of :mod:`mirkit.index` and :mod:`mirkit.index.impacts`)."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()
