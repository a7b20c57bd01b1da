"""The ASGI application of ``mirkit serve`` (:func:`create_app`).

Design, for a reviewer:

* Every handler validates its whole request first (unknown parameters and JSON fields, types,
  ranges, lengths) and answers a mistake with a 4xx JSON body ``{"error": "<one line>"}``;
  the library's own ValueError/TypeError/KeyError on a request's values (a malformed filter, an
  unterminated quote) become 400s with the library's message. An unexpected exception is a
  500 ``{"error": "internal server error"}``, never a traceback in the response.
* Searches run on the application's thread pool (``ServeLimits.threads`` threads, handed work
  by ``loop.run_in_executor``, which costs less per request than anyio's ``to_thread``); the
  kernels release the GIL, so one process answers concurrent requests on several cores. Each
  runs under ``ServeLimits.timeout``: past it the client gets a 503 and the thread's result is
  dropped (a thread cannot be stopped).
* The searcher holds one commit; every ``refresh_interval`` seconds (and at once after a commit
  of this server) a request moves it to the index's latest commit
  (:meth:`mirkit.search.Searcher.refresh`), so readers see other processes' commits without a
  restart and never a half-written one.
* Writes go through one :class:`mirkit.index.SegmentWriter`, serialized by a lock; the writer
  is opened at startup (it takes the index's write lock, so a second writing server fails at
  once). At shutdown (uvicorn's graceful stop on SIGTERM, after the requests in flight have
  finished) the writer **commits** what was acknowledged but not yet committed, then closes.
* No request value becomes a file path: document ids are looked up in the index, image files
  in a table made at startup from the image index's own ids, static files in a table of the
  package's page files.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import io
import json
import math
import re
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Optional

import numpy as np

try:
    import anyio
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
except ImportError as e:  # pragma: no cover - the extra is part of the test extra
    raise ImportError("mirkit.serve needs the serve extra: pip install 'mirkit[serve]' "
                      f"(starlette, uvicorn, python-multipart): {e}") from None

from mirkit.index import Index
from mirkit.index.columns import ColumnCollector, read_columns, settings_fields
from mirkit.index.segments import SegmentedIndex, UnknownDocumentError, is_segmented
from mirkit.index.store import NoStoreError, stored_fields, stored_snippets
from mirkit.search import ALGORITHMS, Searcher
from mirkit.search.filters import _parts, index_fields
from mirkit.search.scoring import SCORERS
from mirkit.serve.openapi import SCHEMA

__all__ = ["ServeLimits", "create_app"]

API_KEY_HEADER = "x-api-key"
_INTEGER = re.compile(r"-?[0-9]{1,12}")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".pgm", ".ppm", ".webp")
_STATIC = Path(__file__).parent / "static"
_STATIC_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8"}
_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
                ".bmp": "image/bmp", ".webp": "image/webp", ".tif": "image/tiff",
                ".tiff": "image/tiff", ".pgm": "image/x-portable-graymap",
                ".ppm": "image/x-portable-pixmap"}
# The page's own files only; data goes in through textContent, images from this origin or
# the user's own upload (blob:).
_PAGE_HEADERS = {"content-security-policy": "default-src 'none'; script-src 'self'; "
                 "style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
                 "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
                 "x-content-type-options": "nosniff", "referrer-policy": "no-referrer"}


@dataclass(frozen=True)
class ServeLimits:
    """The service's bounds on what one request may ask (each a 4xx past it).

    Parameters
    ----------
    max_k : int
        Largest ``offset + k`` of a search (results ranked per request).
    max_query_chars : int
        Longest query text (``q``, each query of a batch) and filter, in characters.
    max_url_bytes : int
        Longest query string of a URL (414 past it).
    max_body_bytes : int
        Largest JSON request body (413 past it).
    max_upload_bytes : int
        Largest image upload (``POST /images/search``, 413 past it).
    max_image_pixels : int
        Largest decoded image (width x height) of an upload.
    max_batch : int
        Most queries in one ``POST /search``.
    timeout : float
        Seconds a search may run before the client gets a 503.
    refresh_interval : float
        Seconds between checks for a newer commit of the index.
    threads : int
        Threads that run searches (and document fetches, image searches) in one process.

    Raises
    ------
    ValueError
        A bound that is not a positive integer (a positive number of seconds).

    Examples
    --------
    >>> ServeLimits(max_k=100, timeout=2.5).max_k
    100
    >>> ServeLimits(max_batch=0)
    Traceback (most recent call last):
    ...
    ValueError: max_batch must be a positive integer, got 0
    """

    max_k: int = 1000
    max_query_chars: int = 1024
    max_url_bytes: int = 8192
    max_body_bytes: int = 1 << 20
    max_upload_bytes: int = 16 << 20
    max_image_pixels: int = 16_000_000
    max_batch: int = 100
    timeout: float = 10.0
    refresh_interval: float = 0.5
    threads: int = 16

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if f.type == "float":
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 \
                        or not math.isfinite(v):
                    raise ValueError(f"{f.name} must be a positive number of seconds, got {v!r}")
            elif isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{f.name} must be a positive integer, got {v!r}")


class _Bad(HTTPException):
    """A 4xx answer with one message."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(status, message)


# -- request parsing ---------------------------------------------------------------------------

def _query_params(request: Request, allowed: tuple) -> dict:
    """The URL's parameters, strictly: UTF-8 (percent-escapes decoded strictly), each once, each
    one of `allowed`."""
    raw = request.scope.get("query_string", b"")
    try:
        pairs = urllib.parse.parse_qsl(raw.decode("ascii"), keep_blank_values=True,
                                       strict_parsing=False, errors="strict")
    except UnicodeDecodeError:
        raise _Bad("the query string is not valid UTF-8") from None
    out: dict = {}
    for name, value in pairs:
        if name not in allowed:
            raise _Bad(f"unknown parameter {name!r}; expected one of {list(allowed)}")
        if name in out:
            raise _Bad(f"parameter {name!r} given twice")
        out[name] = value
    return out


async def _json_body(request: Request, allowed: tuple) -> dict:
    body = await request.body()
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise _Bad("the request body is not valid UTF-8") from None
    except json.JSONDecodeError as e:
        raise _Bad(f"the request body is not valid JSON: {e.msg} at line {e.lineno} column "
                   f"{e.colno}") from None
    if not isinstance(data, dict):
        raise _Bad(f"the request body must be a JSON object, got {type(data).__name__}")
    for name in data:
        if name not in allowed:
            raise _Bad(f"unknown field {name!r}; expected one of {list(allowed)}")
    return data


def _int(value, name: str, low: int, high: Optional[int] = None) -> int:
    """An integer parameter: an int in JSON, decimal digits in a URL."""
    if isinstance(value, str):
        if not _INTEGER.fullmatch(value):
            raise _Bad(f"{name} must be an integer, got {value[:40]!r}")
        value = int(value)
    elif isinstance(value, bool) or not isinstance(value, int):
        raise _Bad(f"{name} must be an integer, got {type(value).__name__}")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"between {low} and {high}"
        raise _Bad(f"{name} must be {bound}, got {value}")
    return value


def _bool(value, name: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("1", "true", "yes", "0", "false", "no"):
        return value.lower() in ("1", "true", "yes")
    raise _Bad(f"{name} must be true or false, got {str(value)[:40]!r}")


def _text(value, name: str, limit: int, empty: bool = True) -> str:
    if not isinstance(value, str):
        raise _Bad(f"{name} must be a string, got {type(value).__name__}")
    if len(value) > limit:
        raise _Bad(f"{name} is {len(value)} characters long; this server's limit is {limit}")
    if "\x00" in value:
        raise _Bad(f"{name} must not contain NUL characters")
    if not empty and not value:
        raise _Bad(f"{name} must not be empty")
    return value


def _choice(value, name: str, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        raise _Bad(f"{name} must be one of {sorted(choices)}, got {str(value)[:40]!r}")
    return value


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


# -- the service ---------------------------------------------------------------------------------

class _Service:
    """What the handlers share: the index's current searcher, the image index, the writer."""

    def __init__(self, path, image_index, images, allow_writes: bool, api_key, limits):
        self.path = Path(path) if path is not None else None
        self.limits = limits
        self.searcher: Optional[Searcher] = None
        self.image_index = None
        self.image_files: dict = {}
        self._refresh_lock = threading.Lock()
        self._codes = None  # (snapshot, its keyword fields' codes): facets
        self._checked = time.monotonic()
        self.writer = None
        self.write_lock = threading.Lock()
        self.pool: Optional[ThreadPoolExecutor] = None  # made by the lifespan
        self.api_key = None
        if self.path is not None:
            from mirkit.image_search import FORMAT as IMAGE_FORMAT

            if _is_image_index(self.path, IMAGE_FORMAT):
                image_index = self.path if image_index is None else image_index
            else:
                self.searcher = Searcher(Index.open(self.path))
        if image_index is not None:
            from mirkit.image_search import ImageIndex

            self.image_index = image_index if isinstance(image_index, ImageIndex) \
                else ImageIndex.load(image_index)
            if images is not None:
                self.image_files = _image_files(Path(images), self.image_index.ids)
        elif images is not None:
            raise ValueError("images= (the folder of the indexed images) needs an image index")
        if self.searcher is None and self.image_index is None:
            raise ValueError("nothing to serve: give an index directory or an image index")
        if allow_writes:
            if self.searcher is None:
                raise ValueError("allow_writes needs a text index (an image index is read-only)")
            if not isinstance(api_key, str) or len(api_key) < 16:
                raise ValueError("allow_writes needs an API key of at least 16 characters "
                                 "(--api-key-env VAR or --api-key-file FILE)")
            self.api_key = api_key.encode("utf-8")
        elif api_key is not None:
            raise ValueError("api_key is for writes: pass allow_writes=True too")
        self.allow_writes = allow_writes
        self.titles = None if self.searcher is None else _has_titles(self.searcher.index)

    # searches ---------------------------------------------------------------------------------

    def current(self) -> Searcher:
        """The searcher of the latest commit, checked every `refresh_interval` seconds."""
        searcher = self.searcher
        if searcher is None:
            raise _Bad("this server holds no text index", 404)
        if time.monotonic() - self._checked >= self.limits.refresh_interval:
            self.refresh()
        return self.searcher

    def refresh(self) -> None:
        with self._refresh_lock:
            self._checked = time.monotonic()
            current = self.searcher
            if isinstance(current.index, SegmentedIndex) or not is_segmented(self.path):
                self.searcher = current.refresh()
            else:  # a writer made a one-segment index (build_index's) living: follow it
                self.searcher = Searcher(Index.open(self.path))

    def search(self, q: str, k: int, offset: int, options: dict, snippets: bool,
               facets: bool = False) -> dict:
        searcher = self.current()
        start = time.perf_counter()
        try:
            # With facets, the best max_k results are counted; the hits are their
            # [offset, offset + k) slice, which is what a search of offset + k returns.
            r = searcher.search(q, k=self.limits.max_k if facets else offset + k, **options)
            ids = r.ids[offset:offset + k]
            scores = r.scores[offset:offset + k].tolist()
            hits = [{"rank": offset + i + 1, "id": id, "score": s}
                    for i, (id, s) in enumerate(zip(ids, scores))]
            index = searcher.index
            if hits and snippets and self.titles is not None:
                docids = r.docids[offset:offset + k]
                for hit, snip in zip(hits, stored_snippets(index, docids, q)):
                    hit["snippets"] = snip
                if self.titles:
                    for hit, doc in zip(hits, index.documents(docids, fields=["title"])):
                        hit["title"] = doc.get("title")
        except (ValueError, TypeError, KeyError) as e:  # the library's verdict on the request
            raise _Bad(_message(e)) from None
        out = {"query": q, "k": k, "offset": offset, "generation": _generation(index),
               "took_ms": round((time.perf_counter() - start) * 1e3, 3), "hits": hits}
        if facets:
            out["facets"] = self.facets(index, r.docids)
        return out

    def facets(self, index, docids) -> dict:
        """``{keyword field: {value: count}}`` among the documents `docids` (most frequent
        first, at most 50 values a field)."""
        out = {}
        for name, (codes, values) in self._keyword_codes(index).items():
            picked = codes[np.asarray(docids, np.int64)]
            counts = np.bincount(picked[picked >= 0], minlength=len(values))
            order = np.lexsort((np.arange(len(values)), -counts))[:50]
            out[name] = {values[i]: int(counts[i]) for i in order if counts[i]}
        return out

    def _keyword_codes(self, index) -> dict:
        """Per keyword field of the snapshot `index`: (an int32 code per internal docid, -1
        without a value; the sorted values), the segments' dictionaries merged; made once per
        snapshot."""
        cached = self._codes
        if cached is not None and cached[0] is index:
            return cached[1]
        out = {}
        for name, kind in index_fields(index).items():
            if kind != "keyword":
                continue
            parts = []
            for part, deleted in _parts(index):
                c = read_columns(part).get(name)
                n = part.stats.n_docs
                codes = np.full(n, -1, np.int32) if c is None else c.values
                parts.append((codes if deleted is None else codes[~deleted],
                              () if c is None else c.dictionary))
            values = sorted({v for _, d in parts for v in d})
            merged = []
            for codes, dictionary in parts:
                to_global = np.searchsorted(np.array(values, dtype=object), np.array(
                    dictionary, dtype=object)).astype(np.int32) if dictionary else None
                merged.append(np.where(codes >= 0, to_global[np.maximum(codes, 0)], -1)
                              if to_global is not None else codes)
            out[name] = (np.concatenate(merged) if merged else np.zeros(0, np.int32), values)
        self._codes = (index, out)
        return out

    # writes -----------------------------------------------------------------------------------

    def open_writer(self) -> None:
        if self.allow_writes and self.writer is None:
            from mirkit.index import IndexWriter

            self.writer = IndexWriter.open(self.path)
            self.refresh()  # an index of format 1 became a segmented one

    def close_writer(self) -> None:
        """Shutdown: commit what was acknowledged and not committed yet, then close."""
        with self.write_lock:
            if self.writer is not None:
                try:
                    self.writer.commit()
                finally:
                    self.writer.close()
                    self.writer = None

    def _hide(self, message: str) -> str:
        """`message` without the index's location on the server's disk."""
        for where in {str(self.path.resolve()), str(self.path)}:
            message = message.replace(where, "the index")
        return message

    def write(self, change, commit: bool) -> dict:
        with self.write_lock:
            if self.writer is None:
                raise _Bad("the server is shutting down", 503)
            try:
                out = change(self.writer)
            except UnknownDocumentError as e:
                raise _Bad(self._hide(_message(e)), 404) from None
            except (ValueError, TypeError) as e:
                status = 409 if "already in" in str(e) else 400
                raise _Bad(self._hide(_message(e)), status) from None
            if commit:
                out["generation"] = self.writer.commit()
        out["committed"] = commit
        if commit:
            self.refresh()
        return out


def _message(e: BaseException) -> str:
    text = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
    return str(text).splitlines()[0][:500] if str(text) else type(e).__name__


def _generation(index) -> Optional[int]:
    return index.generation if isinstance(index, SegmentedIndex) else None


def _is_image_index(path: Path, image_format: str) -> bool:
    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and meta.get("format") == image_format


def _has_titles(index) -> Optional[bool]:
    """None without a document store; else whether its documents may carry a title."""
    try:
        names = stored_fields(index)
    except NoStoreError:
        return None
    return names is None or "title" in names


def _image_files(folder: Path, ids: list) -> dict:
    """``{image id: file}`` for the ids of an image index whose file is in `folder` (as
    ``mirkit image-index`` names them: the path relative to the folder, without suffix)."""
    if not folder.is_dir():
        raise ValueError(f"images: {folder} is not a folder")
    wanted = set(ids)
    out = {}
    root = folder.resolve()
    for p in sorted(folder.rglob("*")):
        if p.suffix.lower() in _IMAGE_TYPES and p.is_file():
            id = p.relative_to(folder).with_suffix("").as_posix()
            if id in wanted and id not in out and root in p.resolve().parents:
                out[id] = p
    return out


# -- handlers ------------------------------------------------------------------------------------

_SEARCH_PARAMS = ("q", "k", "offset", "algorithm", "scorer", "filter", "snippets", "facets")


def _search_options(params: dict, limits: ServeLimits) -> tuple:
    """(k, offset, options of Searcher.search, snippets) of a GET or POST search."""
    k = _int(params.get("k", 10), "k", 1, limits.max_k)
    offset = _int(params.get("offset", 0), "offset", 0, limits.max_k - 1)
    if offset + k > limits.max_k:
        raise _Bad(f"offset + k must be at most {limits.max_k} (this server's limit), got "
                   f"{offset + k}")
    options = {"algorithm": _choice(params.get("algorithm", "bmw"), "algorithm", ALGORITHMS)}
    if params.get("scorer") is not None:
        options["scorer"] = _choice(params["scorer"], "scorer", tuple(SCORERS))
    if params.get("filter") not in (None, ""):
        options["filter"] = _text(params["filter"], "filter", limits.max_query_chars)
    snippets = _bool(params.get("snippets", True), "snippets")
    facets = _bool(params.get("facets", False), "facets")
    return k, offset, options, snippets, facets


async def _run(request: Request, fn, *args):
    """`fn(*args)` on the search threads, within the request time limit (past it the answer is
    a 503 and the thread's result is dropped: a running kernel cannot be stopped)."""
    service = request.app.state.service
    limit = service.limits.timeout
    future = asyncio.get_running_loop().run_in_executor(service.pool, functools.partial(
        fn, *args))
    try:
        return await asyncio.wait_for(future, limit)
    except asyncio.TimeoutError:
        raise _Bad(f"the request took longer than this server's limit of {limit:g} s",
                   503) from None


async def search_get(request: Request):
    service = request.app.state.service
    params = _query_params(request, _SEARCH_PARAMS)
    if "q" not in params:
        raise _Bad("parameter 'q' (the query) is required")
    q = _text(params["q"], "q", service.limits.max_query_chars)
    k, offset, options, snippets, facets = _search_options(params, service.limits)
    return JSONResponse(await _run(request, service.search, q, k, offset, options, snippets,
                                   facets))


async def search_post(request: Request):
    service = request.app.state.service
    _query_params(request, ())
    body = await _json_body(request, ("queries", *_SEARCH_PARAMS[1:]))
    queries = body.get("queries")
    if not isinstance(queries, list) or not queries:
        raise _Bad("field 'queries' must be a non-empty list of query strings")
    if len(queries) > service.limits.max_batch:
        raise _Bad(f"at most {service.limits.max_batch} queries per request, got {len(queries)}")
    queries = [_text(q, f"queries[{i}]", service.limits.max_query_chars)
               for i, q in enumerate(queries)]
    k, offset, options, snippets, facets = _search_options(body, service.limits)

    def batch():
        start = time.perf_counter()
        results = [service.search(q, k, offset, options, snippets, facets) for q in queries]
        return {"results": results, "took_ms": round((time.perf_counter() - start) * 1e3, 3)}

    return JSONResponse(await _run(request, batch))


async def document_get(request: Request):
    service = request.app.state.service
    _query_params(request, ())
    id = request.path_params["id"]

    def fetch():
        index = service.current().index
        try:
            docid = int(index.docids_of([id])[0])
        except KeyError:
            raise _Bad(f"no document with id {id[:200]!r}", 404) from None
        try:
            return {"id": id, "docid": docid, "generation": _generation(index),
                    "document": index.document(docid)}
        except NoStoreError:
            raise _Bad("this index keeps no document store (build it with store=True / "
                       "mirkit index --store)", 404) from None

    return JSONResponse(await _run(request, fetch))


def _stats(service: _Service) -> dict:
    out: dict = {"writes": service.allow_writes, "limits": {
        f.name: getattr(service.limits, f.name) for f in fields(service.limits)}}
    if service.searcher is not None:
        index = service.current().index
        stats = index.stats
        kinds = index_fields(index)
        keyword = {name: values[:200]
                   for name, (_, values) in service._keyword_codes(index).items()}
        out["index"] = {
            "n_docs": int(stats.n_docs), "n_terms": int(stats.n_terms),
            "avg_doc_length": float(stats.avg_doc_length), "generation": _generation(index),
            "segments": len(index.segments) if isinstance(index, SegmentedIndex) else 1,
            "positions": bool(index.has_positions), "store": service.titles is not None,
            "numeric_fields": sorted(n for n, k in kinds.items() if k == "numeric"),
            "keyword_fields": keyword}
    if service.image_index is not None:
        im = service.image_index
        out["images"] = {"n_images": len(im), "n_words": int(im.quantizer.n_words),
                         "files": len(service.image_files)}
    return out


async def stats_get(request: Request):
    _query_params(request, ())
    return JSONResponse(await _run(request, _stats, request.app.state.service))


async def health_get(request: Request):
    _query_params(request, ())
    return JSONResponse({"status": "ok"})


async def image_search_post(request: Request):
    service = request.app.state.service
    if service.image_index is None:
        raise _Bad("this server holds no image index", 404)
    params = _query_params(request, ("k", "verify"))
    k = _int(params.get("k", 5), "k", 1, service.limits.max_k)
    verify = _bool(params.get("verify", True), "verify")
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise _Bad("send the image as multipart/form-data, in a field named 'image'", 415)
    try:
        async with request.form(max_files=1, max_fields=1,
                                max_part_size=service.limits.max_upload_bytes) as form:
            names = list(form.keys())
            if names != ["image"]:
                raise _Bad(f"expected one form field 'image' (a file), got {names}")
            upload = form["image"]
            if isinstance(upload, str):
                raise _Bad("form field 'image' must be a file")
            data = await upload.read()
    except HTTPException:
        raise
    except Exception as e:  # python-multipart's verdict on a malformed body
        raise _Bad(f"malformed multipart body: {_message(e)}") from None

    def find():
        pixels = _decode_image(data, service.limits.max_image_pixels)
        start = time.perf_counter()
        r = service.image_index.search(pixels, k=k, verify=verify)
        took = (time.perf_counter() - start) * 1e3
        hits = []
        for i, (id, score) in enumerate(zip(r.ids, r.scores.tolist())):
            hit = {"rank": i + 1, "id": id, "score": score,
                   "image": f"/images/{urllib.parse.quote(id)}"
                   if id in service.image_files else None}
            if verify:
                hit["inliers"] = int(r.inliers[i])
                hit["matches"] = np.round(r.matches[i], 2).tolist()
            hits.append(hit)
        return {"k": k, "verify": verify, "width": int(pixels.shape[1]),
                "height": int(pixels.shape[0]), "took_ms": round(took, 3), "hits": hits}

    return JSONResponse(await _run(request, find))


def _decode_image(data: bytes, max_pixels: int):
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - Pillow comes with the serve extra
        raise _Bad("this server cannot decode images (Pillow is not installed)", 501) from None
    try:
        with Image.open(io.BytesIO(data)) as im:
            if im.width * im.height > max_pixels:
                raise _Bad(f"the image has {im.width}x{im.height} pixels; this server's limit "
                           f"is {max_pixels} pixels", 413)
            grey = np.asarray(im.convert("L"))  # as mirkit.image_search.load_image reads a file
    except _Bad:
        raise
    except Exception as e:  # Pillow's verdict: not an image, truncated, unsupported
        raise _Bad(f"the upload is not a readable image: {_message(e)}") from None
    if min(grey.shape) < 16:
        raise _Bad(f"the image is {grey.shape[1]}x{grey.shape[0]} pixels; at least 16x16 "
                   "are needed")
    return grey


async def image_file_get(request: Request):
    service = request.app.state.service
    _query_params(request, ())
    path = service.image_files.get(request.path_params["id"])  # looked up, never joined
    if path is None:
        raise _Bad(f"no image file for id {request.path_params['id'][:200]!r}", 404)
    data = await anyio.to_thread.run_sync(path.read_bytes)
    return Response(data, media_type=_IMAGE_TYPES[path.suffix.lower()],
                    headers={"x-content-type-options": "nosniff",
                             "cache-control": "max-age=3600"})


def _authorize(request: Request) -> _Service:
    service = request.app.state.service
    if not service.allow_writes:
        raise _Bad("writes are disabled on this server (start it with --allow-writes and an "
                   "API key)", 403)
    given = request.headers.get(API_KEY_HEADER, "").encode("utf-8", "surrogateescape")
    if not hmac.compare_digest(given, service.api_key):
        raise _Bad(f"a valid API key is required in the {API_KEY_HEADER!r} header", 401)
    return service


_DOC_FIELDS = ("id", "text", "fields")


def _document(d, where: str, limits: ServeLimits) -> tuple:
    if not isinstance(d, dict):
        raise _Bad(f"{where} must be an object with 'id' and 'text'")
    for name in d:
        if name not in _DOC_FIELDS:
            raise _Bad(f"unknown field {name!r} in {where}; expected one of {list(_DOC_FIELDS)}")
    id = _text(d.get("id"), f"{where}.id", 1000, empty=False)
    text = d.get("text")
    if not isinstance(text, (str, dict)):
        raise _Bad(f"{where}.text must be a string (an object of text fields in an index "
                   "with fields)")
    values = d.get("fields")
    if values is not None and not isinstance(values, dict):
        raise _Bad(f"{where}.fields must be an object of field values")
    return id, text, values


async def documents_post(request: Request):
    service = _authorize(request)
    _query_params(request, ())
    body = await _json_body(request, ("documents", "commit", "update", *_DOC_FIELDS))
    if "documents" in body:
        if any(n in body for n in _DOC_FIELDS):
            raise _Bad("give either 'documents' (a list) or one document's 'id' and 'text'")
        docs = body["documents"]
        if not isinstance(docs, list) or not docs:
            raise _Bad("field 'documents' must be a non-empty list of documents")
        docs = [_document(d, f"documents[{i}]", service.limits) for i, d in enumerate(docs)]
    else:
        docs = [_document({n: body[n] for n in _DOC_FIELDS if n in body}, "document",
                          service.limits)]
    if len({d[0] for d in docs}) != len(docs):
        raise _Bad("the same id twice in one request")
    commit = _bool(body.get("commit", False), "commit")
    update = _bool(body.get("update", False), "update")

    def change(writer):
        # All or nothing: every document is checked before the first is added, so a bad one
        # leaves no other pending (the ids by the writer's own lookups, the field values by
        # the collector the writer records them with).
        numeric, keyword = settings_fields(writer.settings)
        probe = ColumnCollector(numeric, keyword)
        text_type = Mapping if "fields" in writer.settings else str
        for id, text, values in docs:
            if not isinstance(text, text_type):
                raise TypeError(f"document {id!r}: text must be " + (
                    "an object of the index's text fields" if text_type is Mapping
                    else "a string"))
            if values and not (numeric or keyword):
                raise ValueError(f"document {id!r}: fields given, but the index has no "
                                 "numeric or keyword fields")
            probe.add(id, values)
        if not update:
            live = writer._live_of([d[0] for d in docs])
            for (id, _, _), known in zip(docs, live):
                if known:
                    raise ValueError(f"document id {id!r} is already in the index; send "
                                     "\"update\": true to replace it")
        else:
            writer._resolve([d[0] for d in docs], "update")
        for id, text, values in docs:
            (writer.update if update else writer.add)(id, text, values)
        return {"added" if not update else "updated": len(docs)}

    return JSONResponse(await anyio.to_thread.run_sync(service.write, change, commit))


async def document_delete(request: Request):
    service = _authorize(request)
    params = _query_params(request, ("commit",))
    commit = _bool(params.get("commit", False), "commit")
    id = request.path_params["id"]
    return JSONResponse(await anyio.to_thread.run_sync(
        service.write, lambda w: {"deleted": w.delete([id])}, commit))


async def commit_post(request: Request):
    service = _authorize(request)
    _query_params(request, ())
    return JSONResponse(await anyio.to_thread.run_sync(
        service.write, lambda w: {}, True))


# -- the page, the schema, the empty endpoint ----------------------------------------------------

def _static_files() -> dict:
    return {p.name: (p.read_bytes(), _STATIC_TYPES[p.suffix]) for p in _STATIC.iterdir()
            if p.suffix in _STATIC_TYPES}


async def page_get(request: Request):
    body, kind = request.app.state.static["index.html"]
    return Response(body, media_type=kind, headers=_PAGE_HEADERS)


async def static_get(request: Request):
    found = request.app.state.static.get(request.path_params["name"])
    if found is None:
        raise _Bad(f"no file {request.path_params['name'][:100]!r}", 404)
    return Response(found[0], media_type=found[1], headers=_PAGE_HEADERS)


async def openapi_get(request: Request):
    return JSONResponse(SCHEMA)


async def empty_get(request: Request):
    """The HTTP floor of this stack (``mirkit bench serve``): no work, the smallest answer."""
    return Response(b"{}", media_type="application/json")


ROUTES = [
    Route("/", page_get, methods=["GET"]),
    Route("/static/{name}", static_get, methods=["GET"]),
    Route("/openapi.json", openapi_get, methods=["GET"]),
    Route("/health", health_get, methods=["GET"]),
    Route("/stats", stats_get, methods=["GET"]),
    Route("/search", search_get, methods=["GET"]),
    Route("/search", search_post, methods=["POST"]),
    Route("/documents", documents_post, methods=["POST"]),
    Route("/documents/{id:path}", document_get, methods=["GET"]),
    Route("/documents/{id:path}", document_delete, methods=["DELETE"]),
    Route("/commit", commit_post, methods=["POST"]),
    Route("/images/search", image_search_post, methods=["POST"]),
    Route("/images/{id:path}", image_file_get, methods=["GET"]),
]


class _Limits:
    """ASGI middleware: the URL and body limits, before any handler reads a byte (a
    Content-Length past the limit is refused at once; a chunked body when it passes it)."""

    def __init__(self, app, limits: ServeLimits):
        self.app = app
        self.limits = limits

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if len(scope.get("query_string", b"")) > self.limits.max_url_bytes:
            return await _send_error(send, 414, f"the query string is longer than this "
                                     f"server's limit of {self.limits.max_url_bytes} bytes")
        limit = (self.limits.max_upload_bytes + 65536 if scope["path"] == "/images/search"
                 else self.limits.max_body_bytes)
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    return await _send_error(send, 400, "malformed Content-Length header")
                if length > limit:
                    return await _send_error(send, 413, f"the request body is {length} bytes; "
                                             f"this server's limit is {limit}")
        seen = 0

        async def limited_receive():  # a body sent without Content-Length (chunked)
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _Bad(f"the request body is over this server's limit of {limit} "
                               "bytes", 413)
            return message

        await self.app(scope, limited_receive, send)


async def _send_error(send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _http_error(request: Request, exc: HTTPException):
    message = exc.detail if isinstance(exc, _Bad) else {
        404: f"no route {request.url.path[:200]!r}",
        405: f"method {request.method} is not allowed on {request.url.path[:200]!r}"}.get(
        exc.status_code, str(exc.detail))
    return _error(exc.status_code, message)


async def _internal_error(request: Request, exc: Exception):
    return _error(500, "internal server error")


def create_app(path=None, *, image_index=None, images=None, allow_writes: bool = False,
               api_key: Optional[str] = None, limits: Optional[ServeLimits] = None):
    """The ASGI application serving an index (module docstring, README "A search service").

    Parameters
    ----------
    path : str or Path, optional
        An index directory (:meth:`mirkit.index.Index.open`: one built by ``build_index`` or a
        living index), or an image index directory (:class:`mirkit.image_search.ImageIndex`).
    image_index : str, Path or ImageIndex, optional
        An image index served beside the text index (``POST /images/search``).
    images : str or Path, optional
        The folder the image index was built from (``mirkit image-index FOLDER``): the page
        shows a result's picture from it (``GET /images/{id}``).
    allow_writes : bool
        Accept ``POST /documents``, ``DELETE /documents/{id}`` and ``POST /commit`` from
        clients sending `api_key` in the ``X-API-Key`` header. The writer is opened when
        the application starts (its lifespan) and holds the index's write lock.
    api_key : str, optional
        The key writes need, at least 16 characters (compared in constant time).
    limits : ServeLimits, optional
        The bounds of a request (default :class:`ServeLimits`).

    Returns
    -------
    starlette.applications.Starlette

    Raises
    ------
    ValueError
        Nothing to serve, `allow_writes` without a text index or a key, a bad `images` folder.

    Notes
    -----
    Thread safety: the application serves concurrent requests (searches on its thread pool,
    writes one at a time); run one application per index directory that takes writes (the
    writer holds the index's lock).

    Examples
    --------
    >>> import os, tempfile
    >>> from starlette.testclient import TestClient
    >>> from mirkit.index import build_index
    >>> from mirkit.serve import create_app
    >>> path = os.path.join(tempfile.mkdtemp(), "idx")
    >>> _ = build_index([("a", "Lift <b>of</b> a wing"), ("b", "drag")], path, store=True)
    >>> with TestClient(create_app(path)) as client:
    ...     hits = client.get("/search", params={"q": "wing"}).json()["hits"]
    ...     bad = client.get("/search", params={"q": "wing", "k": "-1"})
    >>> [(h["id"], h["snippets"]) for h in hits]
    [('a', ['Lift &lt;b&gt;of&lt;/b&gt; a <b>wing</b>'])]
    >>> bad.status_code, bad.json()
    (400, {'error': 'k must be between 1 and 1000, got -1'})
    """
    limits = ServeLimits() if limits is None else limits
    if not isinstance(limits, ServeLimits):
        raise TypeError(f"limits must be a ServeLimits, got {type(limits).__name__}")
    if not isinstance(allow_writes, bool):
        raise TypeError("allow_writes must be a bool")
    service = _Service(path, image_index, images, allow_writes, api_key, limits)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        service.pool = ThreadPoolExecutor(limits.threads, thread_name_prefix="mirkit-serve")
        await anyio.to_thread.run_sync(service.open_writer)
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(service.close_writer)
            service.pool.shutdown(wait=False, cancel_futures=True)

    app = Starlette(routes=ROUTES + [Route("/empty", empty_get, methods=["GET"])],
                    lifespan=lifespan,
                    exception_handlers={HTTPException: _http_error, Exception: _internal_error})
    app.state.service = service
    app.state.static = _static_files()
    app.add_middleware(_Limits, limits=limits)
    return app

