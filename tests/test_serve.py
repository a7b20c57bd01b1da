"""mirkit serve: every endpoint against the library's own answers on Cranfield (Starlette's
TestClient), hostile requests, the OpenAPI description, writes with the API key; then real
uvicorn processes: concurrent readers during commits, SIGTERM, kill -9 under write load; and
the page in headless Chromium (tests/test_serve_page.py)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the serve extra (starlette) is not installed")
pytest.importorskip("uvicorn", reason="the serve extra (uvicorn) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx (Starlette's TestClient) is not installed")
jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette's note that httpx2 will replace httpx
    from starlette.testclient import TestClient

from mirkit.index import Index, IndexWriter, build_index  # noqa: E402
from mirkit.search import Searcher  # noqa: E402
from mirkit.serve import ServeLimits, create_app  # noqa: E402
from mirkit.serve.openapi import SCHEMA  # noqa: E402

KEY = "k" * 8 + "-serve-test-key"
HOSTILE_TEXT = "<script>alert('x')</script> wing & <img src=x onerror=alert(1)> flutter"


@pytest.fixture(scope="module")
def cran(cranfield_dir, tmp_path_factory):
    """Cranfield with a store and positions, plus one hostile document."""
    path = tmp_path_factory.mktemp("serve") / "cran"
    docs = [json.loads(line) for line in open(cranfield_dir / "docs.jsonl", encoding="utf-8")]
    for d in docs:  # a keyword field for the filters: odd and even ids
        d["parity"] = "odd" if int(d["id"]) % 2 else "even"
    docs.append({"id": "evil", "title": "<b>bold</b> & <script>", "text": HOSTILE_TEXT})
    build_index(docs, path, store=True, positions=True, keyword_fields=["parity"])
    return path


@pytest.fixture(scope="module")
def client(cran):
    with TestClient(create_app(cran), raise_server_exceptions=True) as c:
        yield c


@pytest.fixture(scope="module")
def searcher(cran):
    return Searcher(Index.open(cran))


def _ok(response, schema_name=None):
    assert response.status_code == 200, response.text
    body = response.json()
    if schema_name is not None:
        _validate(body, schema_name)
    return body


def _validate(body, name):
    schema = {"$ref": f"#/components/schemas/{name}", "components": SCHEMA["components"]}
    jsonschema.Draft202012Validator(schema).validate(body)


def test_search_equals_the_library(client, searcher, cranfield_queries):
    for qid, q in cranfield_queries[:40]:
        ref = searcher.search(q, k=10, snippets=True)
        got = _ok(client.get("/search", params={"q": q, "k": 10}), "SearchResult")
        assert [h["id"] for h in got["hits"]] == ref.ids
        assert [h["score"] for h in got["hits"]] == ref.scores.tolist()  # bit for bit
        assert [h["snippets"] for h in got["hits"]] == ref.snippets()
        titles = [d.get("title") for d in ref.documents()]
        assert [h["title"] for h in got["hits"]] == titles
        assert [h["rank"] for h in got["hits"]] == list(range(1, len(ref.ids) + 1))


@pytest.mark.parametrize("options", [
    {"algorithm": "maxscore", "scorer": "tfidf"}, {"algorithm": "taat", "scorer": "ql"},
    {"algorithm": "and"}, {"filter": "wing OR flutter"}, {"filter": "parity:odd"}])
def test_search_options_and_paging(client, searcher, cranfield_queries, options):
    from mirkit.search.scoring import get_scorer

    lib = {**options, **({"scorer": get_scorer(options["scorer"])} if "scorer" in options
                         else {})}
    for _, q in cranfield_queries[40:50]:
        ref = searcher.search(q, k=15, **lib)
        page = _ok(client.get("/search", params={"q": q, "k": 5, "offset": 10,
                                                 "snippets": "false", **options}))
        assert [h["id"] for h in page["hits"]] == ref.ids[10:15]
        assert [h["score"] for h in page["hits"]] == ref.scores[10:15].tolist()
        assert [h["rank"] for h in page["hits"]] == list(range(11, 11 + len(ref.ids[10:15])))
        assert all("snippets" not in h for h in page["hits"])


def test_facets_count_the_best_results(client, searcher, cranfield_queries):
    """Keyword values counted among the best max_k (1000) results, from the documents' own
    ids (the fixture's parity field), with and without a filter; the hits are unchanged."""
    for _, q in cranfield_queries[:5]:
        ref = searcher.search(q, k=1000)
        got = _ok(client.get("/search", params={"q": q, "k": 5, "offset": 3, "facets": 1}),
                  "SearchResult")
        odd = sum(int(i) % 2 for i in ref.ids if i != "evil")
        even = sum(1 for i in ref.ids if i != "evil") - odd
        assert got["facets"] == {"parity": {k: v for k, v in
                                            sorted({"odd": odd, "even": even}.items(),
                                                   key=lambda kv: -kv[1]) if v}}
        assert [h["id"] for h in got["hits"]] == ref.ids[3:8]
        only = _ok(client.get("/search", params={"q": q, "facets": "true",
                                                 "filter": "parity:even"}))
        filtered = searcher.search(q, k=1000, filter="parity:even").ids
        assert all(int(i) % 2 == 0 for i in filtered)
        evens = len(filtered)
        assert only["facets"] == ({"parity": {"even": evens}} if evens else {"parity": {}})


def test_facets_over_segments_with_deletions(tmp_path):
    """Segments with different keyword dictionaries and deleted documents."""
    path = tmp_path / "segs"
    with IndexWriter.open(path, keyword_fields=["lang"], merge_policy=None) as w:
        w.add("a", "wing", {"lang": "en"})
        w.add("b", "wing", {"lang": "fr"})
        w.commit()
        w.add("c", "wing", {"lang": "de"})
        w.add("d", "wing")
        w.add("e", "wing", {"lang": "en"})
        w.delete(["b"])
    with TestClient(create_app(path)) as c:
        got = _ok(c.get("/search", params={"q": "wing", "facets": 1}), "SearchResult")
        assert got["facets"] == {"lang": {"en": 2, "de": 1}}
        assert c.get("/stats").json()["index"]["keyword_fields"] == {"lang": ["de", "en", "fr"]}


def test_batch_equals_single_searches(client, cranfield_queries):
    queries = [q for _, q in cranfield_queries[:12]]
    batch = _ok(client.post("/search", json={"queries": queries, "k": 3, "offset": 1}),
                "BatchResult")
    assert len(batch["results"]) == len(queries)
    for q, r in zip(queries, batch["results"]):
        single = _ok(client.get("/search", params={"q": q, "k": 3, "offset": 1}))
        assert r["hits"] == single["hits"] and r["query"] == q


def test_documents_stats_health(client, searcher, cran):
    index = searcher.index
    for id in ("1", "700", "1400", "evil"):
        got = _ok(client.get(f"/documents/{id}"), "Document")
        docid = int(index.docids_of([id])[0])
        assert got["document"] == index.document(docid) and got["docid"] == docid
    stats = _ok(client.get("/stats"), "Stats")
    assert stats["index"]["n_docs"] == index.stats.n_docs == 1401
    assert stats["index"]["n_terms"] == index.stats.n_terms and stats["writes"] is False
    assert stats["index"]["keyword_fields"] == {"parity": ["even", "odd"]}
    assert _ok(client.get("/health"), "Health") == {"status": "ok"}
    page = client.get("/")
    assert page.status_code == 200 and "script-src 'self'" in page.headers[
        "content-security-policy"]
    for name in ("app.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200


def test_markup_in_documents_and_queries_is_escaped(client):
    got = _ok(client.get("/search", params={"q": "<script>wing flutter</script>", "k": 3}))
    evil = next(h for h in got["hits"] if h["id"] == "evil")
    text = " ".join(evil["snippets"])
    assert "<script" not in text and "<img" not in text and "&lt;img src=x" in text
    assert set(_tags(text)) <= {"<b>", "</b>"}  # the marks are the only markup
    assert evil["title"] == "<b>bold</b> & <script>"  # data, shown by textContent
    assert got["query"] == "<script>wing flutter</script>"


def _tags(text):
    import re

    return re.findall(r"<[^>]*>", text)


HOSTILE = [
    ("GET", "/search?q=wing&k=1000000", None, 400, "k must be between 1 and 1000"),
    ("GET", "/search?q=wing&k=abc", None, 400, "k must be an integer"),
    ("GET", "/search?q=wing&k=--5", None, 400, "k must be an integer"),
    ("GET", "/search?q=wing&k=%EF%BC%95", None, 400, "k must be an integer"),  # a wide 5
    ("GET", "/search?q=wing&k=5&offset=-3", None, 400, "offset must be between"),
    ("GET", "/search?q=wing&offset=999&k=10", None, 400, "offset + k must be at most 1000"),
    ("GET", "/search?q=wing&color=red", None, 400, "unknown parameter 'color'"),
    ("GET", "/search?q=wing&q=lift", None, 400, "given twice"),
    ("GET", "/search?k=3", None, 400, "parameter 'q' (the query) is required"),
    ("GET", "/search?q=%C3%28", None, 400, "not valid UTF-8"),
    ("GET", "/search?q=" + "a" * 1100, None, 400, "this server's limit is 1024"),
    ("GET", "/search?q=wing&algorithm=magic", None, 400, "algorithm must be one of"),
    ("GET", "/search?q=wing&filter=year%20%3E%3D", None, 400, "year"),
    ("GET", "/search?q=%22boundary%20layer", None, 400, "unterminated quote"),
    ("GET", "/search?q=wing&snippets=maybe", None, 400, "snippets must be true or false"),
    ("GET", "/search?" + "q=a&" * 3000, None, 414, "query string is longer"),
    ("GET", "/documents/..%2F..%2F..%2Fetc%2Fpasswd", None, 404, "no document with id"),
    ("GET", "/documents/../../etc/passwd", None, 404, None),
    ("GET", "/documents/%2Fetc%2Fpasswd", None, 404, "no document with id"),
    ("GET", "/documents/%FF%FE", None, 404, "no document with id"),
    ("GET", "/documents/1%00", None, 404, "no document with id"),
    ("GET", "/images/..%2Fmeta.json", None, 404, "no image file"),
    ("GET", "/static/..%2F__init__.py", None, 404, None),
    ("GET", "/nowhere", None, 404, "no route"),
    ("PUT", "/search", None, 405, "not allowed"),
    ("POST", "/search", b"{not json", 400, "not valid JSON"),
    ("POST", "/search", b"\xff\xfe\x00", 400, "not valid UTF-8"),
    ("POST", "/search", b"[1, 2]", 400, "must be a JSON object"),
    ("POST", "/search", b'{"queries": ["wing"], "k": 1e9}', 400, "k must be an integer"),
    ("POST", "/search", b'{"queries": ["wing"], "k": 5000}', 400, "k must be between"),
    ("POST", "/search", b'{"queries": ["wing"], "offset": -1}', 400, "offset must be"),
    ("POST", "/search", b'{"queries": ["wing"], "boost": 2}', 400, "unknown field 'boost'"),
    ("POST", "/search", b'{"queries": "wing"}', 400, "must be a non-empty list"),
    ("POST", "/search", b'{"queries": [1]}', 400, "queries[0] must be a string"),
    ("POST", "/search", json.dumps({"queries": ["a"] * 101}).encode(), 400, "at most 100"),
    ("POST", "/search", b'{"queries": ["x"], "pad": "' + b"a" * (1 << 20) + b'"}', 413,
     "limit is 1048576"),
    ("POST", "/documents", b'{"id": "x", "text": "y"}', 403, "writes are disabled"),
    ("DELETE", "/documents/1", None, 403, "writes are disabled"),
    ("POST", "/commit", None, 403, "writes are disabled"),
    ("POST", "/images/search", b"", 404, "no image index"),
]


@pytest.mark.parametrize("method,url,body,status,message", HOSTILE,
                         ids=[f"{m} {u[:40]} {s}" for m, u, _, s, _ in HOSTILE])
def test_hostile_requests_get_one_json_error(client, method, url, body, status, message):
    r = client.request(method, url, content=body)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert isinstance(error, str) and "\n" not in error and "Traceback" not in error
    assert message is None or message in error
    _validate(r.json(), "Error")
    assert client.get("/health").status_code == 200  # still serving


def test_chunked_body_over_the_limit(cran):
    app = create_app(cran, limits=ServeLimits(max_body_bytes=1000))
    with TestClient(app) as c:
        r = c.post("/search", content=iter([b'{"queries": ["', b"a" * 800, b"a" * 800, b'"]}']))
        assert r.status_code == 413 and "limit of 1000" in r.json()["error"]


def test_time_limit(cran, monkeypatch):
    app = create_app(cran, limits=ServeLimits(timeout=0.05))
    service = app.state.service
    slow = service.search
    monkeypatch.setattr(service, "search", lambda *a: (time.sleep(0.3), slow(*a))[1])
    with TestClient(app) as c:
        r = c.get("/search", params={"q": "wing"})
        assert r.status_code == 503 and "limit of 0.05 s" in r.json()["error"]


def test_every_route_is_described(cran):
    app = create_app(cran)
    paths = SCHEMA["paths"]
    for route in app.routes:
        path = route.path.replace(":path}", "}")
        assert path in paths, path
        for method in route.methods - {"HEAD"}:
            assert method.lower() in paths[path], (method, path)
    jsonschema.Draft202012Validator.check_schema(
        {"$ref": "#/components/schemas/Stats", "components": SCHEMA["components"]})


def test_create_app_errors(cran, tmp_path):
    with pytest.raises(ValueError, match="API key of at least 16"):
        create_app(cran, allow_writes=True)
    with pytest.raises(ValueError, match="API key of at least 16"):
        create_app(cran, allow_writes=True, api_key="short")
    with pytest.raises(ValueError, match="pass allow_writes=True"):
        create_app(cran, api_key=KEY)
    with pytest.raises(ValueError, match="nothing to serve"):
        create_app()
    with pytest.raises(ValueError, match="max_k must be a positive integer"):
        ServeLimits(max_k=0)
    with pytest.raises(FileNotFoundError):
        create_app(tmp_path / "missing")


# -- writes ------------------------------------------------------------------------------------

@pytest.fixture
def living(cranfield_docs, tmp_path):
    path = tmp_path / "live"
    with IndexWriter.open(path, store=True) as w:
        w.add_documents(cranfield_docs[:200])
    return path


def test_writes_need_the_key_and_are_seen_at_commit(living):
    app = create_app(living, allow_writes=True, api_key=KEY)
    ok = {"X-API-Key": KEY}
    with TestClient(app) as c:
        doc = {"id": "new1", "text": "a zyxwing of hypersonic flutter"}
        assert c.post("/documents", json=doc).status_code == 401
        assert c.post("/documents", json=doc, headers={"X-API-Key": KEY + "x"}
                      ).status_code == 401
        assert c.post("/documents", json=doc, headers={"X-API-Key": "é".encode() * 20}
                      ).status_code == 401
        r = _ok(c.post("/documents", json=doc, headers=ok), "WriteResult")
        assert r == {"added": 1, "committed": False}
        assert c.get("/search", params={"q": "zyxwing"}).json()["hits"] == []  # not committed
        r = _ok(c.post("/commit", headers=ok), "WriteResult")
        generation = r["generation"]
        hits = c.get("/search", params={"q": "zyxwing"}).json()
        assert [h["id"] for h in hits["hits"]] == ["new1"] and hits["generation"] == generation
        assert _ok(c.get("/documents/new1"))["document"] == {"id": "new1",
                                                            "text": doc["text"]}
        dup = c.post("/documents", json={**doc, "commit": True}, headers=ok)
        assert dup.status_code == 409 and "already in the index" in dup.json()["error"]
        r = _ok(c.post("/documents", headers=ok, json={"documents": [
            {"id": "new1", "text": "zyxwing updated"}, {"id": "1", "text": "zyxwing too"}],
            "update": True, "commit": True}))
        assert r["updated"] == 2 and r["committed"]
        assert c.delete("/documents/nope?commit=true", headers=ok).status_code == 404
        assert _ok(c.delete("/documents/new1?commit=true", headers=ok))["deleted"] == 1
        assert [h["id"] for h in c.get("/search", params={"q": "zyxwing"}).json()["hits"]] \
            == ["1"]
        assert c.get("/documents/new1").status_code == 404
        bad = c.post("/documents", headers=ok, json={"id": "z", "text": "t", "when": 1})
        assert bad.status_code == 400 and "unknown field 'when'" in bad.json()["error"]
        assert c.post("/documents", headers=ok, json={"documents": [
            {"id": "a1", "text": "x"}, {"id": "a1", "text": "y"}]}).status_code == 400
        r = c.delete("/documents/nope", headers=ok)
        assert r.status_code == 404 and str(living) not in r.json()["error"]  # no disk paths
        c.post("/documents", json={"id": "pending", "text": "zyxpending"}, headers=ok)
    # Leaving the app (its lifespan's end, as on SIGTERM) committed the acknowledged write.
    assert "pending" in Index.open(living).doc_ids
    ref = Searcher(Index.open(living)).search("zyxwing", k=5)
    assert ref.ids == ["1"]


def test_a_bad_document_adds_none_of_its_request(cranfield_docs, tmp_path):
    path = tmp_path / "fields"
    with IndexWriter.open(path, store=True, keyword_fields=["lang"]) as w:
        w.add("a", "wing lift", {"lang": "en"})
    ok = {"X-API-Key": KEY}
    with TestClient(create_app(path, allow_writes=True, api_key=KEY)) as c:
        for bad, message in [({"id": "y", "text": "t", "fields": {"lang": 5}}, "must be a str"),
                             ({"id": "y", "text": {"t": "x"}}, "text must be a string"),
                             ({"id": "a", "text": "t"}, "already in the index")]:
            r = c.post("/documents", headers=ok, json={"documents": [
                {"id": "x", "text": "zyxgood", "fields": {"lang": "fr"}}, bad], "commit": True})
            assert r.status_code in (400, 409) and message in r.json()["error"], r.text
        assert c.get("/search", params={"q": "zyxgood"}).json()["hits"] == []
    assert Index.open(path).doc_ids == ["a"]  # nothing was pending at shutdown either


def test_writes_to_an_index_of_build_index(cranfield_docs, tmp_path):
    """A one-segment index (build_index's) becomes a living one when the writer opens it;
    the searcher follows it there."""
    path = tmp_path / "built"
    build_index(cranfield_docs[:50], path, store=True)
    with TestClient(create_app(path, allow_writes=True, api_key=KEY)) as c:
        r = c.post("/documents", json={"id": "b1", "text": "zyxbuilt", "commit": True},
                   headers={"X-API-Key": KEY})
        assert r.status_code == 200, r.text
        got = c.get("/search", params={"q": "zyxbuilt"}).json()
        assert [h["id"] for h in got["hits"]] == ["b1"] and got["generation"] is not None
        assert c.get("/stats").json()["index"]["n_docs"] == 51


# -- images ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def image_folder(tmp_path_factory):
    """Three synthetic scenes as PNG files, an image index of them, and a cropped query."""
    from PIL import Image

    from mirkit.image import gaussian_blur
    from mirkit.image_search import ImageIndex

    folder = tmp_path_factory.mktemp("pictures")
    rng = np.random.default_rng(0)
    paths = []
    for name in ("alpha", "beta", "gamma"):
        scene = gaussian_blur(rng.random((160, 160), dtype=np.float32), 2.0)
        scene = (scene - scene.min()) / (scene.max() - scene.min())
        pixels = (scene * 255).astype(np.uint8)
        Image.fromarray(pixels).save(folder / f"{name}.png")
        paths.append(folder / f"{name}.png")
        if name == "beta":
            Image.fromarray(pixels[8:, 5:]).save(folder.parent / "query.png")
    index = ImageIndex.build(paths, ["alpha", "beta", "gamma"], n_words=64,
                             path=folder.parent / "pictures.idx", threads=1)
    return folder, index, folder.parent / "query.png"


def test_image_search_equals_the_library(cran, image_folder):
    folder, index, query = image_folder
    ref = index.search(str(query), k=2, verify=True)
    app = create_app(cran, image_index=index.path, images=folder)
    with TestClient(app) as c:
        with open(query, "rb") as f:
            r = c.post("/images/search?k=2", files={"image": ("q.png", f, "image/png")})
        got = _ok(r, "ImageResult")
        assert [h["id"] for h in got["hits"]] == ref.ids and ref.ids[0] == "beta"
        assert [h["score"] for h in got["hits"]] == ref.scores.tolist()
        assert [h["inliers"] for h in got["hits"]] == ref.inliers.tolist()
        best = np.array(got["hits"][0]["matches"])
        assert len(best) == ref.inliers[0] > 20
        # The crop starts at (x, y) = (5, 8) of the scene: each verified match says so.
        np.testing.assert_allclose(best[:, 2:] - best[:, :2], np.tile([5, 8], (len(best), 1)),
                                   atol=3)
        picture = c.get(got["hits"][0]["image"])
        assert picture.status_code == 200 and picture.content == (folder / "beta.png"
                                                                  ).read_bytes()
        assert c.get("/stats").json()["images"] == {"n_images": 3, "n_words": 64, "files": 3}
        for files, status, message in [
                ({"image": ("q.png", b"not an image", "image/png")}, 400, "not a readable"),
                ({"picture": ("q.png", b"x", "image/png")}, 400, "one form field 'image'"),
                ({"image": ("q.png", _png(np.zeros((8, 8), np.uint8)), "image/png")}, 400,
                 "at least 16x16")]:
            r = c.post("/images/search", files=files)
            assert r.status_code == status and message in r.json()["error"]
        r = c.post("/images/search", content=b"raw", headers={"content-type": "image/png"})
        assert r.status_code == 415
        r = c.post("/images/search?k=0", files={"image": ("q.png", b"x", "image/png")})
        assert r.status_code == 400 and "k must be between 1 and 1000" in r.json()["error"]


def _png(pixels) -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


def test_image_upload_limits(image_folder):
    _, index, query = image_folder
    app = create_app(index.path, limits=ServeLimits(max_upload_bytes=2000,
                                                    max_image_pixels=100 * 100))
    with TestClient(app) as c:
        assert c.get("/search", params={"q": "x"}).status_code == 404
        big = _png(np.random.default_rng(0).integers(0, 255, (200, 200), np.uint8))
        r = c.post("/images/search", files={"image": ("q.png", big, "image/png")})
        assert r.status_code == 413
        r = c.post("/images/search", files={"image": ("q.png", _png(np.zeros(
            (120, 120), np.uint8)), "image/png")})
        assert r.status_code == 413 and "limit is 10000 pixels" in r.json()["error"]


# -- a real server -----------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``mirkit serve`` in a subprocess, on a free loopback port."""

    def __init__(self, *args, env=None):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mirkit.cli", "serve", *map(str, args), "--port",
             str(self.port)], env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError(f"the server did not start: {self.proc.stdout.read()}")
            time.sleep(0.05)

    def stop(self, sig=signal.SIGTERM) -> int:
        """Signal the server and wait; True when it stopped as uvicorn does after a graceful
        shutdown (it re-raises the signal it caught, so the status is -SIGTERM, or 0)."""
        self.proc.send_signal(sig)
        return self.proc.wait(30) in (0, -signal.SIGTERM)


def test_concurrent_readers_see_only_whole_commits(living):
    """Readers on 3 threads while a writer commits batches of 5 documents holding a marker
    word: each answer counts a multiple of 5 of them, never fewer than an earlier answer."""
    server = Server(living, "--allow-writes", "--api-key-env", "MIRKIT_TEST_KEY",
                    env={"MIRKIT_TEST_KEY": KEY})
    try:
        stop = threading.Event()
        seen: list = []
        errors: list = []

        def read():
            last = 0
            with httpx.Client(base_url=server.url) as c:
                while not stop.is_set():
                    r = c.get("/search", params={"q": "qqmarker", "k": 1000, "snippets": 0})
                    if r.status_code != 200:
                        errors.append(r.text)
                        continue
                    n = len(r.json()["hits"])
                    if n % 5 or n < last:
                        errors.append(f"saw {n} after {last}")
                    last = n
                    seen.append(n)

        readers = [threading.Thread(target=read) for _ in range(3)]
        for t in readers:
            t.start()
        with httpx.Client(base_url=server.url, headers={"X-API-Key": KEY}) as c:
            for b in range(8):
                docs = [{"id": f"m{b}-{i}", "text": f"qqmarker batch {b} doc {i}"}
                        for i in range(5)]
                r = c.post("/documents", json={"documents": docs, "commit": True})
                assert r.status_code == 200, r.text
                # Acknowledged and committed: every later search sees it at once.
                hits = c.get("/search", params={"q": "qqmarker", "k": 1000}).json()["hits"]
                assert len(hits) == 5 * (b + 1)
        stop.set()
        for t in readers:
            t.join()
        assert not errors, errors[:5]
        assert len(set(seen)) > 2 and max(seen) == 40
    finally:
        assert server.stop()


def test_sigterm_finishes_requests_in_flight(living):
    server = Server(living, "--allow-writes", "--api-key-file", _key_file(living))
    with httpx.Client(base_url=server.url, headers={"X-API-Key": KEY}) as c:
        r = c.post("/documents", json={"id": "late", "text": "acknowledged not committed"})
        assert r.json() == {"added": 1, "committed": False}
    queries = ["boundary layer flow"] * 100
    result = {}

    def slow_batch():  # about a second: 20,000 snippets
        with httpx.Client(base_url=server.url, timeout=30) as c:
            result["r"] = c.post("/search", json={"queries": queries, "k": 200})

    t = threading.Thread(target=slow_batch)
    t.start()
    time.sleep(0.15)  # the batch is in flight
    assert server.stop(signal.SIGTERM)
    t.join()
    assert result["r"].status_code == 200 and len(result["r"].json()["results"]) == 100
    assert "late" in Index.open(living).doc_ids  # the writer committed at shutdown


def _key_file(where) -> str:
    path = os.path.join(os.path.dirname(where), "key.txt")
    with open(path, "w") as f:
        f.write(KEY + "\n")
    return path


KILL_TRIALS = int(os.environ.get("MIRKIT_SERVE_KILL_TRIALS", "3"))


def test_kill_9_loses_no_acknowledged_commit(cranfield_docs, tmp_path):
    """kill -9 of a server under write load (two clients adding and committing), at a random
    moment: every document whose commit was acknowledged is in the index afterwards.
    ``MIRKIT_SERVE_KILL_TRIALS=20`` runs more trials (README: 20 of them)."""
    rng = np.random.default_rng(9)
    path = tmp_path / "crash"
    with IndexWriter.open(path, store=True) as w:
        w.add_documents(cranfield_docs[:50])
    key_file = _key_file(path)
    total = 0
    for trial in range(KILL_TRIALS):
        server = Server(path, "--allow-writes", "--api-key-file", key_file)
        acked: list = []
        stop = threading.Event()

        def write(client_id):
            n = 0
            with httpx.Client(base_url=server.url, headers={"X-API-Key": KEY}) as c:
                while not stop.is_set():
                    id = f"t{trial}-c{client_id}-{n}"
                    try:
                        r = c.post("/documents", json={"id": id, "text": f"crash test {id}",
                                                       "commit": True})
                    except httpx.HTTPError:
                        return  # the server died mid-request: not acknowledged
                    if r.status_code == 200:
                        acked.append(id)
                    n += 1

        writers = [threading.Thread(target=write, args=(i,)) for i in range(2)]
        for t in writers:
            t.start()
        deadline = time.monotonic() + 20
        while len(acked) < 3 and time.monotonic() < deadline:  # under load, not at rest
            time.sleep(0.01)
        time.sleep(float(rng.uniform(0, 0.3)))
        server.proc.kill()
        server.proc.wait(10)
        stop.set()
        for t in writers:
            t.join()
        ids = set(Index.open(path).doc_ids)
        lost = [i for i in acked if i not in ids]
        assert not lost and acked, (trial, lost, len(acked))
        total += len(acked)
    print(f"kill -9: {KILL_TRIALS} trials, {total} acknowledged commits, none lost")


@pytest.mark.parametrize("args,message", [
    (["--allow-writes"], "API key of at least 16 characters"),
    (["--allow-writes", "--workers", "2", "--api-key-env", "MIRKIT_TEST_KEY"],
     "--allow-writes needs --workers 1"),
    (["--api-key-env", "MIRKIT_TEST_KEY"], "an API key is for writes"),
    (["--allow-writes", "--api-key-env", "MIRKIT_NO_SUCH_VARIABLE"], "is not set or empty"),
    (["--port", "70000"], "--port must be between 0 and 65535"),
    (["--max-k", "0"], "max_k must be a positive integer"),
])
def test_cli_errors_are_one_line(cran, capsys, monkeypatch, args, message):
    from mirkit.cli import main

    monkeypatch.setenv("MIRKIT_TEST_KEY", KEY)
    assert main(["serve", str(cran), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mirkit serve: error: ") and message in err and err.count("\n") == 1


def test_cli_missing_index(tmp_path, capsys):
    from mirkit.cli import main

    assert main(["serve", str(tmp_path / "none")]) == 2
    assert "mirkit serve: error:" in capsys.readouterr().err


# -- the page in a real browser ----------------------------------------------------------------

def _chromium():
    """(chromium, chromedriver) of the distribution, or a skip naming what is missing."""
    import shutil

    pytest.importorskip("selenium", reason="selenium is not installed")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        pytest.skip("Debian's chromium and chromium-driver are absent (the browser test "
                    "drives them; .ci/run installs them with apt-get where it can)")
    return browser, driver


def test_page_in_headless_chromium(cran, image_folder, tmp_path, capsys):
    """Types a query, checks the ranked titles and the highlighted words on screen, that a
    document's markup shows as text, pages on; uploads a picture and sees its verified
    matches drawn. Screenshots go to $MIRKIT_ARTIFACTS (or the test's temporary folder)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser, chromedriver = _chromium()
    folder, index, query = image_folder
    server = Server(cran, "--image-index", index.path, "--images", folder)
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1100,900",
                "--disable-dev-shm-usage"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    artifacts = os.environ.get("MIRKIT_ARTIFACTS") or str(tmp_path)
    os.makedirs(artifacts, exist_ok=True)
    try:
        wait = WebDriverWait(driver, 20)
        driver.get(server.url + "/")
        wait.until(lambda d: "documents" in d.find_element(By.ID, "info").text)
        box = driver.find_element(By.ID, "q")
        box.send_keys("flutter of wings <script>")
        driver.find_element(By.ID, "go").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#results li.hit")) == 10)
        expected = httpx.get(server.url + "/search", params={
            "q": "flutter of wings <script>", "k": 10}).json()["hits"]
        hits = driver.find_elements(By.CSS_SELECTOR, "#results li.hit")
        for hit, want in zip(hits, expected):
            assert hit.find_element(By.CLASS_NAME, "title").text == (want["title"] or
                                                                     want["id"]).strip()
            assert f"id {want['id']} " in hit.find_element(By.CLASS_NAME, "meta").text
        marks = [m.text.lower() for m in driver.find_elements(By.CSS_SELECTOR, "#results mark")]
        assert marks and all(m.startswith(("flutter", "wing", "script")) for m in marks), marks
        evil = [h for h in hits if "id evil " in h.text]
        assert evil and "<b>bold</b> & <script>" in evil[0].text  # markup shown as text
        assert "<img src=x onerror=alert(1)>" in evil[0].text
        assert not driver.find_elements(By.CSS_SELECTOR, "#results script, #results img, "
                                                         "#results b")
        assert "Results 1–10" in driver.find_element(By.ID, "status").text
        assert " ms" in driver.find_element(By.ID, "status").text  # the timing
        text_shot = os.path.join(artifacts, "serve-page-text.png")
        driver.save_screenshot(text_shot)
        driver.find_element(By.ID, "next").click()
        wait.until(lambda d: "Results 11–20" in d.find_element(By.ID, "status").text)
        second = driver.find_elements(By.CSS_SELECTOR, "#results li.hit")[0]
        page2 = httpx.get(server.url + "/search", params={
            "q": "flutter of wings <script>", "k": 10, "offset": 10}).json()["hits"]
        assert f"id {page2[0]['id']} " in second.text

        from selenium.webdriver.support.ui import Select

        facets = httpx.get(server.url + "/search", params={
            "q": "flutter of wings <script>", "facets": "true"}).json()["facets"]["parity"]
        labels = [o.text for o in driver.find_elements(By.CSS_SELECTOR,
                                                       "select[data-field=parity] option")]
        assert labels == ["any", f"even ({facets['even']})", f"odd ({facets['odd']})"]
        Select(driver.find_element(By.CSS_SELECTOR, "select[data-field=parity]")
               ).select_by_value("odd")  # the keyword field's filter
        wait.until(lambda d: "Results 1–10" in d.find_element(By.ID, "status").text
                   and all(x.isdigit() and int(x) % 2 for x in (
                       m.text.split()[1] for m in d.find_elements(
                           By.CSS_SELECTOR, "#results .meta"))))
        odd = httpx.get(server.url + "/search", params={
            "q": "flutter of wings <script>", "k": 10, "filter": 'parity:"odd"'}).json()
        shown = [m.text.split()[1] for m in driver.find_elements(By.CSS_SELECTOR,
                                                                 "#results .meta")]
        assert shown == [h["id"] for h in odd["hits"]]

        driver.find_element(By.ID, "tab-images").click()
        driver.find_element(By.ID, "image-file").send_keys(str(query))
        driver.find_element(By.ID, "image-go").click()
        canvas = driver.find_element(By.ID, "matches")
        wait.until(lambda d: canvas.get_attribute("data-drawn"))
        answer = httpx.post(server.url + "/images/search?k=5", files={
            "image": ("q.png", query.read_bytes(), "image/png")}).json()["hits"]
        assert canvas.get_attribute("data-id") == answer[0]["id"] == "beta"
        assert int(canvas.get_attribute("data-drawn")) == answer[0]["inliers"] > 20
        items = driver.find_elements(By.CSS_SELECTOR, "#image-results li")
        assert [i.text.split(" · ")[0] for i in items] == [h["id"] for h in answer]
        image_shot = os.path.join(artifacts, "serve-page-images.png")
        driver.save_screenshot(image_shot)
        with capsys.disabled():  # in the run's output even when it passes
            print(f"\nmirkit serve page screenshots: {text_shot} {image_shot}")
    finally:
        driver.quit()
        server.stop()


def test_doctests():
    import doctest

    import mirkit.serve.app

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Starlette's note on httpx
        failed, attempted = doctest.testmod(mirkit.serve.app)
    assert failed == 0 and attempted > 0


def test_bench_load_generator(cran, tmp_path):
    """mirkit bench serve's wrk script: rotates the queries, and its report parses (wrk runs
    a second against a real server, twice)."""
    import shutil

    from mirkit.benchmarks import serve as bench

    if shutil.which("wrk") is None:
        pytest.skip("wrk is absent (mirkit bench serve's load generator; .ci/run installs it "
                    "with apt-get where it can)")
    server = Server(cran)
    try:
        paths = [f"/search?q={q}&k=10&snippets=false" for q in ("wing", "shock", "flutter")]
        script = bench._script(tmp_path / "s.lua", paths)
        r = bench._run_wrk(bench._wrk(), server.url, script, 2, 1)
        assert r["requests"] > 10 and r["errors"] == 0 and r["qps"] > 0
        assert 0 < r["p50_ms"] <= r["p99_ms"]
        bad = bench._script(tmp_path / "bad.lua", ["/search?q=wing&k=0"])
        assert bench._run_wrk(bench._wrk(), server.url, bad, 1, 1)["errors"] > 0  # 400s
    finally:
        server.stop()
