"""The document store (mirkit.index.store) and snippets: byte-for-byte round trips (hypothesis,
Unicode, empty and very large documents, every codec of the build and the fallback of a build
without zstd), checksummed blocks (a damaged block is named), segmented indexes through
deletes, updates and merges, concurrent reads, and snippets against the plain Python reference
(tests/reference/highlight.py) on Cranfield and GCIDE."""

from __future__ import annotations

import copy
import gzip
import json
import os
import threading
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirkit import _core, cli
from mirkit.analysis import STOPWORDS, Analyzer
from mirkit.benchmarks.data import data_dir
from mirkit.index import Index, IndexCorruptError, IndexWriter, build_index
from mirkit.index import store
from mirkit.search import Searcher
from reference import highlight as ref

CODECS = store.STORE_CODECS


def write_store(path, texts, codec, block_bytes=1024):
    w = _core.index.StoreWriter(str(path), codec=codec, block_bytes=block_bytes)
    w.add_many(list(texts))
    return w.finish()


@settings(max_examples=25, deadline=None)
@given(texts=st.lists(st.text(max_size=300), max_size=60), codec=st.sampled_from(CODECS))
def test_store_round_trips_any_text(tmp_path_factory, texts, codec):
    path = tmp_path_factory.mktemp("s") / "store.bin"
    n, size, crc = write_store(path, texts, codec)
    assert (n, size, crc) == (len(texts), os.path.getsize(path), _core.index.file_crc32c(str(path)))
    reader = _core.index.StoreReader(str(path))
    assert reader.n_docs == len(texts) and reader.codec == codec
    assert reader.documents(np.arange(len(texts), dtype=np.uint32)) == texts
    order = np.arange(len(texts), dtype=np.uint32)[::-1].copy()
    assert reader.documents(order) == texts[::-1]  # across blocks, backwards (cache reuse)
    with pytest.raises(IndexError, match="out of range"):
        reader.document(len(texts))


@pytest.mark.parametrize("codec", CODECS)
def test_large_and_empty_documents_round_trip(tmp_path, codec):
    big = "abc dé€😀\n\x00<&>" * 150_000 + "end"
    texts = ["", big, "x", "", "π" * 20000, big[:17]]
    write_store(tmp_path / "store.bin", texts, codec, block_bytes=16384)
    reader = _core.index.StoreReader(str(tmp_path / "store.bin"))
    assert [reader.document(i) for i in range(len(texts))] == texts
    assert reader.n_blocks >= 3  # the big documents sit in blocks of their own


@lru_cache(maxsize=None)
def gcide_docs(n: int) -> list:
    base = data_dir()
    if base is None or not (base / "gcide" / "docs.jsonl.gz").is_file():
        pytest.skip("../shared/data/gcide is absent")
    docs = []
    with gzip.open(base / "gcide" / "docs.jsonl.gz", "rt", encoding="utf-8") as f:
        for line, _ in zip(f, range(n)):
            d = json.loads(line)
            docs.append((d["id"], d["title"] + "\n" + d["text"]))
    return docs


@pytest.fixture(scope="module")
def gcide_index(tmp_path_factory):
    return build_index(gcide_docs(4000), tmp_path_factory.mktemp("g") / "idx", store=True,
                       threads=2, batch_size=700)


def test_index_documents_round_trip_on_gcide(gcide_index):
    docs = gcide_docs(4000)
    got = gcide_index.documents(np.arange(len(docs)))
    assert got == [{"id": i, "text": t} for i, t in docs]
    assert gcide_index.document(17) == {"id": docs[17][0], "text": docs[17][1]}
    assert store.STORE_FILE in gcide_index.manifest["files"]
    sizes = gcide_index.sizes()
    assert sizes["store"] == (gcide_index.path / "store.bin").stat().st_size
    assert sum(v for k, v in sizes.items() if k != "total") == sizes["total"]
    with pytest.raises(IndexError):
        gcide_index.document(len(docs))
    with pytest.raises(TypeError):
        gcide_index.document("3")
    with pytest.raises(TypeError):
        gcide_index.documents(3)


def test_skipped_duplicates_leave_the_store_aligned(tmp_path):
    docs = [("a", "one"), ("b", "two"), ("a", "dup"), ("c", "three"), ("b", "dup")]
    with IndexWriter(tmp_path / "i", store=True, batch_size=2) as w:
        w.add_documents(docs, skip_errors=True)
    index = Index.open(tmp_path / "i")
    assert index.documents(range(3)) == [{"id": "a", "text": "one"},
                                         {"id": "b", "text": "two"},
                                         {"id": "c", "text": "three"}]


def test_concurrent_reads_agree(gcide_index):
    docs = [t for _, t in gcide_docs(4000)]
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(30):
            ids = rng.integers(0, len(docs), size=10)
            if [d["text"] for d in gcide_index.documents(ids)] != [docs[i] for i in ids]:
                errors.append(seed)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_fallback_codec_and_missing_codec_error(tmp_path, monkeypatch):
    """A build without zstd writes zlib (simulated at run time), every build reads what it
    has, and a store of a codec the build lacks fails naming it."""
    docs = [("a", "boundary layers"), ("b", "é" * 3000), ("c", "")]
    best = CODECS[0]
    built = build_index(docs, tmp_path / "best", store=True)
    assert _core.index.StoreReader(str(built.path / "store.bin")).codec == best
    try:
        _core.index._disable_store_codec(best, True)
        assert best not in _core.index._store_codecs()
        fallback = build_index(docs, tmp_path / "fallback", store=True)
        codec = _core.index.StoreReader(str(fallback.path / "store.bin")).codec
        assert codec == _core.index._store_codecs()[0] != best
        assert [d["text"] for d in fallback.documents([0, 1, 2])] == [t for _, t in docs]
        if best != "none":
            with pytest.raises(IndexCorruptError, match=f"compressed with {best}, which this "
                               f"build of mirkit lacks.*MIRKIT_{best.upper()}"):
                Index.open(built.path).document(0)
    finally:
        _core.index._disable_store_codec(best, False)
    assert [d["text"] for d in fallback.documents([0, 1, 2])] == [t for _, t in docs]
    monkeypatch.setenv("MIRKIT_STORE_CODEC", "none")
    plain = build_index(docs, tmp_path / "none", store=True)
    assert _core.index.StoreReader(str(plain.path / "store.bin")).codec == "none"
    assert plain.document(1)["text"] == docs[1][1]
    monkeypatch.setenv("MIRKIT_STORE_CODEC", "lzma")
    with pytest.raises(ValueError, match="MIRKIT_STORE_CODEC='lzma'"):
        build_index(docs, tmp_path / "bad", store=True)


def test_damaged_block_is_detected_and_named(tmp_path):
    texts = [f"document {i} " + "word " * (i % 50) for i in range(600)]
    path = tmp_path / "store.bin"
    write_store(path, texts, CODECS[0])
    reader = _core.index.StoreReader(str(path))
    assert reader.n_blocks > 16
    assert (reader.dict_bytes > 0) == (CODECS[0] == "zstd")  # enough blocks to train one
    # The block index (before the 40-byte footer): per block u32 first docid, u64 offset.
    data = bytearray(path.read_bytes())
    index_offset = int.from_bytes(data[-32:-24], "little")
    entry = data[index_offset + 12 * 3: index_offset + 12 * 4]
    first, offset = int.from_bytes(entry[:4], "little"), int.from_bytes(entry[4:], "little")
    data[offset + 16 + 5] ^= 0x40  # a byte of block 3's payload
    path.write_bytes(bytes(data))
    damaged = _core.index.StoreReader(str(path))
    assert damaged.document(0) == texts[0]  # other blocks still read
    with pytest.raises(IndexCorruptError, match=r"store\.bin: block 3 of .*checksum mismatch"):
        damaged.document(first)
    with pytest.raises(IndexCorruptError, match="block 3"):
        damaged.verify()
    path.write_bytes(bytes(data[:-3]))
    with pytest.raises(IndexCorruptError, match="not a mirkit document store"):
        _core.index.StoreReader(str(path))


def test_damaged_store_in_an_index(tmp_path):
    index = build_index([(f"d{i}", f"text {i} " * 40) for i in range(300)], tmp_path / "i",
                        store=True)
    path = index.path / "store.bin"
    data = bytearray(path.read_bytes())
    data[40] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(IndexCorruptError, match="store.bin: checksum mismatch"):
        Index.open(index.path)  # the manifest's CRC-32C of the whole file
    with pytest.raises(IndexCorruptError, match=r"store\.bin: block 0 of"):
        Index.open(index.path, verify=False).document(0)


def test_index_without_store_says_so(tmp_path, capsys):
    index = build_index([("a", "wing flap")], tmp_path / "i")
    with pytest.raises(store.NoStoreError, match=r"no document store.*store=True"):
        index.document(0)
    with pytest.raises(ValueError, match="no document store"):
        Searcher(index).search("wing", snippets=True)
    assert cli.main(["search", str(index.path), "wing", "--show"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("mirkit search: error:") and "no document store" in err
    assert len(err.splitlines()) == 1


def test_writer_options_are_checked(tmp_path):
    with pytest.raises(TypeError, match="store must be a bool"):
        IndexWriter(tmp_path / "a", store="yes")
    with pytest.raises(ValueError, match="merge=False"):
        IndexWriter(tmp_path / "b", store=True, merge=False)


def test_segmented_index_keeps_its_store_through_changes(tmp_path):
    path = tmp_path / "seg"
    model = {}
    with IndexWriter.open(path, store=True, merge_policy=None) as w:
        for i in range(40):
            w.add(f"d{i}", f"first text {i} ü")
            model[f"d{i}"] = f"first text {i} ü"
    with IndexWriter.open(path, merge_policy=None) as w:
        w.delete(["d3", "d30"])
        del model["d3"], model["d30"]
        w.update("d5", "replaced <five> & more")
        model["d5"] = "replaced <five> & more"
        for i in range(40, 60):
            w.add(f"d{i}", "")
            model[f"d{i}"] = ""

    def check():
        index = Index.open(path)
        docs = index.documents(np.arange(len(index)))
        assert {d["id"]: d["text"] for d in docs} == model
        assert [d["id"] for d in docs] == index.doc_ids
        return index

    before = check()
    assert len(before.segments) >= 2
    with IndexWriter.open(path) as w:
        w.merge()
    after = check()
    assert len(after.segments) == 1
    merged = Index.open(path / after.segments[0].name)
    assert _core.index.StoreReader(str(merged.path / "store.bin")).n_docs == len(model)
    hits = Searcher(after).search("replaced five", snippets=True)
    assert hits.ids[0] == "d5"
    assert hits.snippets()[0] == ["<b>replaced</b> &lt;<b>five</b>&gt; &amp; more"]
    assert copy.copy(hits).ids == hits.ids


# -- snippets -------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def term_of():
    porter = pytest.importorskip("nltk.stem.porter")
    return ref.make_term(frozenset(STOPWORDS),
                         porter.PorterStemmer(mode=porter.PorterStemmer.ORIGINAL_ALGORITHM))


def check_against_reference(analyzer, texts, queries, **options):
    term = term_of()
    checked = marks = 0
    for query in queries:
        rendered = store.render_snippets(analyzer, texts, query, **options)
        for text, got in zip(texts, rendered):
            expected = ref.fragments(text, query, term, options.get("fragment_size", 150),
                                     options.get("max_fragments", 2))
            assert store.fragments(analyzer, text, query,
                                   fragment_size=options.get("fragment_size", 150),
                                   max_fragments=options.get("max_fragments", 2)) == expected, \
                (query, text[:80])
            assert got == [ref.render(text, f) for f in expected]
            checked += 1
            marks += sum(len(f[2]) for f in expected)
    return checked, marks


def test_snippets_match_the_reference_on_cranfield(tmp_path, cranfield_dir, cranfield_docs):
    index = build_index(cranfield_docs, tmp_path / "cran", store=True, threads=1,
                        positions=True)  # the phrase queries below need positions
    searcher = Searcher(index)
    queries = [line.split("\t", 1)[1].strip() for line in
               (cranfield_dir / "queries.tsv").read_text().splitlines()[:25]]
    queries += ['"boundary layer" heat', '"of the" wing', '"supersonic flow" -shock']
    texts = []
    for q in queries:
        hits = searcher.search(q, 10, snippets=True)
        texts += [d["text"] for d in hits.documents()]
        assert hits.snippets() == store.render_snippets(index.analyzer, [
            d["text"] for d in hits.documents()], q)
    checked, marks = check_against_reference(index.analyzer, texts[:30], queries)
    assert checked == 30 * len(queries) and marks > 500


def test_snippets_match_the_reference_on_gcide(gcide_index):
    docs = [t for _, t in gcide_docs(4000)]
    rng = np.random.default_rng(3)
    texts = [docs[i] for i in rng.choice(len(docs), 80, replace=False)]
    words = " ".join(texts).split()
    queries = [" ".join(rng.choice(words, 3)) for _ in range(8)]
    queries += ['"' + " ".join(words[i:i + 2]) + '"' for i in rng.choice(len(words) - 2, 4)]
    checked, marks = check_against_reference(gcide_index.analyzer, texts, queries,
                                             fragment_size=60, max_fragments=3)
    assert marks > 50


def test_marks_stems_phrases_and_escapes():
    a = Analyzer()
    text = "Layers of <b>boundary</b> & 'layer' \"boundary layer\"; the boundary of a layer"
    assert store.render_snippets(a, [text], "layer", fragment_size=500) == [[
        "<b>Layers</b> of &lt;b&gt;boundary&lt;/b&gt; &amp; &#x27;<b>layer</b>&#x27; "
        "&quot;boundary <b>layer</b>&quot;; the boundary of a <b>layer</b>"]]
    # A phrase marks its occurrences only: not "boundary of a layer", nor "layer" alone.
    assert store.render_snippets(a, [text], '"boundary layer"', fragment_size=500,
                                 pre="[", post="]", escape=False) == [[
        "Layers of <b>boundary</b> & 'layer' \"[boundary] [layer]\"; the boundary of a layer"]]
    assert store.render_snippets(a, ["nothing here"], "layer") == [[]]
    assert store.render_snippets(a, ["Café crème"], "creme cafe") == [
        ["<b>Café</b> <b>crème</b>"]]
    with pytest.raises(ValueError, match="fragment_size"):
        store.render_snippets(a, ["x"], "x", fragment_size=0)
    with pytest.raises(TypeError, match="pre"):
        store.render_snippets(a, ["x"], "x", pre=1)


def test_fragments_keep_the_punctuation_after_their_last_word():
    """A fragment ends after the characters directly following its last token, up to
    whitespace (str.isspace) or the next token."""
    def one(text, size):
        return store.render_snippets(Analyzer(), [text], "wing", fragment_size=size)[0]

    assert one("The wings, (flaps). Next", 5) == ["<b>wings</b>,"]
    assert one("about wing-tip vortices", 4) == ["<b>wing</b>-"]  # stops at the next token
    assert one("the wing\u00a0next", 4) == ["<b>wing</b>"]  # no-break space is a space
    assert one("la wing\u00bb.\u2014\u3000x", 4) == ["<b>wing</b>\u00bb.\u2014"]
    assert one("a <wing>", 4) == ["<b>wing</b>&gt;"]  # to the end, escaped
    assert one("wing", 4) == ["<b>wing</b>"]


def test_fragment_choice_prefers_distinct_terms_then_density():
    a = Analyzer(stopwords=False, stem=False)
    text = ("alpha alpha alpha alpha filler filler filler filler filler filler " * 3
            + "alpha beta gamma " + "filler " * 30 + "beta beta beta beta")
    frags = store.render_snippets(a, [text], "alpha beta gamma", fragment_size=20,
                                  max_fragments=1, pre="[", post="]")[0]
    assert frags == ["[alpha] [beta] [gamma]"]  # the three distinct terms win
    frags = store.render_snippets(a, [text], "alpha beta gamma", fragment_size=20,
                                  max_fragments=3, pre="[", post="]")[0]
    # then the densest (four betas in 19 characters, three alphas), returned in text order
    assert frags == ["[alpha] [alpha] [alpha]", "[alpha] [beta] [gamma]",
                     "[beta] [beta] [beta] [beta]"]


def test_cli_show_and_snippets(tmp_path, capsys):
    index = build_index([("a", "Wings & flaps\nat low speed"), ("b", "the wing tip")],
                        tmp_path / "i", store=True)
    assert cli.main(["search", str(index.path), "wing", "--snippets"]) == 0
    out = capsys.readouterr().out
    assert "\x1b[" not in out  # piped: plain
    assert "      Wings & flaps at low speed" in out and "      the wing tip" in out
    assert cli.main(["search", str(index.path), "flaps", "--show"]) == 0
    out = capsys.readouterr().out
    assert "      Wings & flaps\n      at low speed\n" in out


def test_cli_snippets_in_colour_on_a_terminal(tmp_path, capsys, monkeypatch):
    index = build_index([("a", "the <wing> tip")], tmp_path / "i", store=True)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert cli.main(["search", str(index.path), "wing", "--snippets"]) == 0
    assert "      the <\x1b[1;31mwing\x1b[0m> tip" in capsys.readouterr().out
