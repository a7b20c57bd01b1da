"""mirkit.ciff: CIFF import and export, checked against the CIFF files themselves (read back by
ciff-toolkit), a plain Python inversion of the documents, and PISA's binary collection."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mirkit.analysis import Analyzer
from mirkit.ciff import CiffFormatError, export_ciff, import_ciff
from mirkit.index import Index, IndexWriter, build_index
from mirkit.search import Searcher
from mirkit.search.scoring import BM25
from reference.scoring import invert

ciff_toolkit = pytest.importorskip("ciff_toolkit")
from ciff_toolkit.ciff_pb2 import DocRecord, Header, Posting, PostingsList  # noqa: E402
from ciff_toolkit.read import CiffReader  # noqa: E402
from ciff_toolkit.write import MessageWriter  # noqa: E402

WORDS = ["alpha", "beta", "gamma", "delta", "pi", "rho", "sigma", "tau", "omega", "zeta"]


def _read_ciff(path) -> tuple:
    """(header, {term: (docids, tfs, df, cf)}, [(docid, id, length)]) of a CIFF file, read by
    ciff-toolkit (its own reader: gzip by the .gz suffix only)."""
    with CiffReader(path) as r:
        header = r.read_header()
        lists = {}
        for pl in r.read_postings_lists():
            gaps = [p.docid for p in pl.postings]
            lists[pl.term] = (np.cumsum(gaps), np.array([p.tf for p in pl.postings]), pl.df,
                              pl.cf)
        docs = [(d.docid, d.collection_docid, d.doclength) for d in r.read_documents()]
    return header, lists, docs


def _write_ciff(path, header: Header, lists, docs) -> None:
    with open(path, "wb") as f:
        w = MessageWriter(f)
        w.write_message(header)
        for pl in lists:
            w.write_message(pl)
        for d in docs:
            w.write_message(d)


def _assert_same_index(a, b) -> None:
    """Same terms, postings, documents and statistics."""
    assert a.terms() == b.terms()
    for t in a.terms():
        for x, y in zip(a.postings(t), b.postings(t)):
            np.testing.assert_array_equal(x, y, err_msg=t)
    assert list(a.doc_ids) == list(b.doc_ids)
    np.testing.assert_array_equal(a.doc_lengths, b.doc_lengths)
    assert a.stats.n_docs == b.stats.n_docs and a.stats.n_postings == b.stats.n_postings
    assert a.stats.total_tokens == b.stats.total_tokens
    assert a.stats.avg_doc_length == b.stats.avg_doc_length


def _assert_ciff_is(path, texts: list, ids: list, analyzer) -> None:
    """The CIFF file holds exactly the plain inversion of `texts` (reference.scoring)."""
    postings, lengths = invert(texts, analyzer)
    header, lists, docs = _read_ciff(path)
    assert header.num_docs == header.total_docs == len(texts)
    assert header.num_postings_lists == header.total_postings_lists == len(postings)
    assert header.total_terms_in_collection == int(lengths.sum())
    assert header.average_doclength == pytest.approx(lengths.mean() if len(texts) else 0.0)
    assert sorted(lists) == sorted(postings)
    for t, (d, f) in postings.items():
        got = lists[t]
        np.testing.assert_array_equal(got[0], d)
        np.testing.assert_array_equal(got[1], f)
        assert got[2] == len(d) and got[3] == int(f.sum())
    assert docs == [(i, x, int(n)) for i, (x, n) in enumerate(zip(ids, lengths))]


# -- round trips ------------------------------------------------------------------------------


def test_round_trip_cranfield_same_postings_statistics_and_results(cranfield_index,
                                                                    cranfield_docs,
                                                                    cranfield_queries, tmp_path):
    ciff = tmp_path / "cran.ciff"
    header = export_ciff(cranfield_index, ciff)
    _assert_ciff_is(ciff, [t for _, t in cranfield_docs], [i for i, _ in cranfield_docs],
                    cranfield_index.analyzer)
    assert header["num_docs"] == 1400
    imported = import_ciff(ciff, tmp_path / "imported")
    assert imported.analyzer == cranfield_index.analyzer  # from the header's description
    _assert_same_index(cranfield_index, imported)
    a, b = Searcher(cranfield_index), Searcher(imported)
    for algorithm in ("exhaustive", "bmw", "maxscore"):
        for _, q in cranfield_queries[:20]:
            x, y = a.search(q, 10, algorithm=algorithm), b.search(q, 10, algorithm=algorithm)
            np.testing.assert_array_equal(x.docids, y.docids)
            assert x.scores.tobytes() == y.scores.tobytes()


_doc = st.lists(st.sampled_from(WORDS), min_size=0, max_size=12).map(" ".join)


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_doc, min_size=1, max_size=30), gz=st.booleans())
def test_round_trip_random_collections(texts, gz, tmp_path_factory):
    d = tmp_path_factory.mktemp("rt")
    ids = [f"doc-{i}" for i in range(len(texts))]
    index = build_index(list(zip(ids, texts)), d / "idx", threads=1)
    ciff = d / ("x.ciff.gz" if gz else "x.ciff")
    export_ciff(index, ciff)
    _assert_ciff_is(ciff, texts, ids, index.analyzer)
    _assert_same_index(index, import_ciff(ciff, d / "back"))


def test_segmented_index_exports_its_live_view(tmp_path):
    rng = np.random.default_rng(3)
    texts = {f"d{i}": " ".join(rng.choice(WORDS, 6)) for i in range(40)}
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        for i, t in list(texts.items())[:25]:
            w.add(i, t)
        w.commit()
        w.add_documents(list(texts.items())[25:])
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.delete(["d3", "d30", "d17"])
        w.update("d5", "alpha alpha omega")
    for i in ("d3", "d30", "d17", "d5"):
        del texts[i]
    texts["d5"] = "alpha alpha omega"
    index = Index.open(path)
    assert len(index.segments) > 1 and sum(s.n_deleted for s in index.segments) > 0
    export_ciff(path, tmp_path / "live.ciff")
    _assert_ciff_is(tmp_path / "live.ciff", list(texts.values()), list(texts),
                    index.analyzer)
    _assert_same_index(index, import_ciff(tmp_path / "live.ciff", tmp_path / "back"))


def test_gzip_detected_by_magic_not_name(tmp_path):
    index = build_index([("a", "alpha beta"), ("b", "beta gamma")], tmp_path / "i", threads=1)
    export_ciff(index, tmp_path / "x.ciff.gz")
    raw = gzip.decompress((tmp_path / "x.ciff.gz").read_bytes())
    (tmp_path / "plain.ciff").write_bytes(raw)
    (tmp_path / "renamed.ciff").write_bytes((tmp_path / "x.ciff.gz").read_bytes())
    for name in ("x.ciff.gz", "plain.ciff", "renamed.ciff"):
        _assert_same_index(index, import_ciff(tmp_path / name, tmp_path / f"out-{name}"))


def test_import_takes_lengths_and_ids_from_doc_records_and_scores_bm25_by_them(tmp_path):
    # Doc lengths larger than the postings' sums (an exporter that counted stopwords) and docs
    # listed out of order: BM25 uses the records' lengths, the ids follow the docids.
    lists = [PostingsList(term="x", df=2, cf=3, postings=[Posting(docid=0, tf=1),
                                                          Posting(docid=2, tf=2)]),
             PostingsList(term="a", df=1, cf=1, postings=[Posting(docid=1, tf=1)])]
    docs = [DocRecord(docid=2, collection_docid="C", doclength=9),
            DocRecord(docid=0, collection_docid="A", doclength=4),
            DocRecord(docid=1, collection_docid="B", doclength=1)]
    _write_ciff(tmp_path / "x.ciff", Header(version=1, num_postings_lists=2, num_docs=3,
                                            description="elsewhere"), lists, docs)
    index = import_ciff(tmp_path / "x.ciff", tmp_path / "i", bm25_k1=1.2, bm25_b=0.75)
    assert index.doc_ids == ["A", "B", "C"] and index.terms() == ["a", "x"]
    np.testing.assert_array_equal(index.doc_lengths, [4, 1, 9])
    assert index.analyzer == Analyzer(stopwords=False, stem=False)
    postings = {"x": (np.array([0, 2]), np.array([1.0, 2.0])),
                "a": (np.array([1]), np.array([1.0]))}
    from reference.scoring import scores

    expected = scores({"x": 1}, postings, np.array([4.0, 1.0, 9.0]), "bm25", k1=1.2, b=0.75)
    r = Searcher(index).search("X", 3, algorithm="exhaustive")
    got = dict(zip(r.docids.tolist(), r.scores.tolist()))
    assert got.keys() == expected.keys()
    for d in got:
        assert got[d] == pytest.approx(expected[d], rel=1e-6)


# -- malformed input ---------------------------------------------------------------------------


def _good() -> tuple:
    lists = [PostingsList(term="a", df=2, cf=3, postings=[Posting(docid=0, tf=1),
                                                          Posting(docid=1, tf=2)]),
             PostingsList(term="b", df=1, cf=1, postings=[Posting(docid=1, tf=1)])]
    docs = [DocRecord(docid=0, collection_docid="d0", doclength=1),
            DocRecord(docid=1, collection_docid="d1", doclength=3)]
    return Header(version=1, num_postings_lists=2, num_docs=2), lists, docs


def _bad_postings(**change):
    def make():
        h, lists, docs = _good()
        lists[1] = PostingsList(**{"term": "b", "df": 1, "cf": 1,
                                   "postings": [Posting(docid=1, tf=1)], **change})
        return h, lists, docs
    return make


def _bad_doc(**change):
    def make():
        h, lists, docs = _good()
        docs[1] = DocRecord(**{"docid": 1, "collection_docid": "d1", "doclength": 3, **change})
        return h, lists, docs
    return make


@pytest.mark.parametrize("make, message", [
    (_bad_postings(postings=[Posting(docid=2, tf=1)]), r"postings list 1 \('b'\): posting 0: "
                                                       r"docid 2 out of range"),
    (_bad_postings(df=2, cf=2, postings=[Posting(docid=1, tf=1), Posting(docid=0, tf=1)]),
     r"postings list 1 .*posting 1: docid gap 0"),
    (_bad_postings(df=2, cf=2, postings=[Posting(docid=1, tf=1), Posting(docid=-1, tf=1)]),
     r"postings list 1 .*posting 1: docid gap -1"),
    (_bad_postings(df=3, cf=3, postings=[Posting(docid=0, tf=1), Posting(docid=2 ** 31 - 1, tf=1),
                                         Posting(docid=2 ** 31 - 1, tf=1)]),
     r"postings list 1 .*posting 1: docid 2147483647 out of range"),  # gaps that overflow
    (_bad_postings(postings=[Posting(docid=-5, tf=1)]), r"postings list 1 .*negative"),
    (_bad_postings(postings=[Posting(docid=0, tf=0)], cf=0), r"postings list 1 .*tf 0"),
    (_bad_postings(df=2), r"postings list 1 .*df is 2 but it has 1 postings"),
    (_bad_postings(cf=7), r"postings list 1 .*cf is 7"),
    (_bad_postings(term="a"), r"postings lists 0 and 1 have the same term 'a'"),
    (_bad_doc(docid=2), r"doc record 1: docid 2 out of range"),
    (_bad_doc(docid=0), r"doc record 1: docid 0 has a record already"),
    (_bad_doc(doclength=-1), r"doc record 1: doclength -1"),
    (_bad_doc(collection_docid="d0"), r"docids 0 and 1 have the same collection_docid 'd0'"),
])
def test_malformed_ciff_names_the_record(make, message, tmp_path):
    _write_ciff(tmp_path / "bad.ciff", *make())
    with pytest.raises(CiffFormatError, match=message):
        import_ciff(tmp_path / "bad.ciff", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.ciff"]  # no temporary left behind


def test_truncated_bad_varint_and_trailing_bytes(tmp_path):
    _write_ciff(tmp_path / "good.ciff", *_good())
    data = (tmp_path / "good.ciff").read_bytes()
    import_ciff(tmp_path / "good.ciff", tmp_path / "ok")
    # Every cut point: an error naming a record, never a crash or a silent partial index.
    for cut in range(len(data)):
        (tmp_path / "cut.ciff").write_bytes(data[:cut])
        with pytest.raises(CiffFormatError, match=r"cut\.ciff: (header|postings list \d|"
                                                  r"doc record \d): "):
            import_ciff(tmp_path / "cut.ciff", tmp_path / "out")
    (tmp_path / "gz.ciff").write_bytes(gzip.compress(data)[:-12])  # gzip cut short
    with pytest.raises((CiffFormatError, EOFError, OSError)):
        import_ciff(tmp_path / "gz.ciff", tmp_path / "out")
    (tmp_path / "varint.ciff").write_bytes(b"\xff" * 11)
    with pytest.raises(CiffFormatError, match="header: bad length varint"):
        import_ciff(tmp_path / "varint.ciff", tmp_path / "out")
    (tmp_path / "tail.ciff").write_bytes(data + b"\x00")
    with pytest.raises(CiffFormatError, match="bytes after doc record 1"):
        import_ciff(tmp_path / "tail.ciff", tmp_path / "out")
    (tmp_path / "garbage.ciff").write_bytes(b"\x05\xff\xff\xff\xff\xff")
    with pytest.raises(CiffFormatError, match="header: not a valid Header"):
        import_ciff(tmp_path / "garbage.ciff", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_bad_arguments(tmp_path):
    _write_ciff(tmp_path / "good.ciff", *_good())
    with pytest.raises(TypeError, match="analyzer"):
        import_ciff(tmp_path / "good.ciff", tmp_path / "o", analyzer="porter")
    with pytest.raises(ValueError, match="codec"):
        import_ciff(tmp_path / "good.ciff", tmp_path / "o", codec="nope")
    with pytest.raises(ValueError, match="bm25_b"):
        import_ciff(tmp_path / "good.ciff", tmp_path / "o", bm25_b=2)
    import_ciff(tmp_path / "good.ciff", tmp_path / "o")
    with pytest.raises(FileExistsError):
        import_ciff(tmp_path / "good.ciff", tmp_path / "o")
    import_ciff(tmp_path / "good.ciff", tmp_path / "o", overwrite=True)
    with pytest.raises(FileNotFoundError):
        import_ciff(tmp_path / "missing.ciff", tmp_path / "o2")


def test_missing_extra_names_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ciff_toolkit", None)
    with pytest.raises(ImportError, match=r"mirkit\[ciff\]"):
        import_ciff(tmp_path / "x.ciff", tmp_path / "o")


def test_cli_import_export(tmp_path, capsys):
    from mirkit.cli import main

    index = build_index([("a", "alpha beta"), ("b", "beta gamma")], tmp_path / "i", threads=1)
    assert main(["ciff", "export", str(tmp_path / "i"), str(tmp_path / "x.ciff.gz")]) == 0
    assert main(["ciff", "import", str(tmp_path / "x.ciff.gz"), str(tmp_path / "back")]) == 0
    _assert_same_index(index, Index.open(tmp_path / "back"))
    assert main(["ciff", "import", "--analyzer", '{"stem": false}', "--codec", "vbyte",
                 str(tmp_path / "x.ciff.gz"), str(tmp_path / "b3")]) == 0
    assert Index.open(tmp_path / "b3").analyzer == Analyzer(stem=False)
    capsys.readouterr()
    (tmp_path / "bad.ciff").write_bytes(b"\x03ab")
    for args in (["import", str(tmp_path / "x.ciff.gz"), str(tmp_path / "back")],
                 ["import", str(tmp_path / "bad.ciff"), str(tmp_path / "b2")],
                 ["import", "--analyzer", "{", str(tmp_path / "x.ciff.gz"), str(tmp_path / "b4")],
                 ["export", str(tmp_path / "missing"), str(tmp_path / "y.ciff")]):
        assert main(["ciff", *args]) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("mirkit ciff: error: ") and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "b2").exists() and not (tmp_path / "y.ciff").exists()


# -- PISA -------------------------------------------------------------------------------------

def _pisa_collection(path: Path) -> tuple:
    """PISA's binary collection (inv.docs / inv.freqs / inv.sizes, fwd.terms, fwd.documents):
    ({term: (docids, freqs)}, sizes, docnos)."""
    docs = np.fromfile(path / "inv.docs", np.uint32)
    freqs = np.fromfile(path / "inv.freqs", np.uint32)
    assert docs[0] == 1
    terms = (path / "fwd.terms").read_text(encoding="utf-8").split("\n")[:-1]
    lists, i, j = {}, 2, 0
    for t in terms:
        n = int(docs[i])
        assert freqs[j] == n
        lists[t] = (docs[i + 1:i + 1 + n], freqs[j + 1:j + 1 + n])
        i, j = i + 1 + n, j + 1 + n
    assert i == len(docs) and j == len(freqs)
    sizes = np.fromfile(path / "inv.sizes", np.uint32)
    docnos = (path / "fwd.documents").read_text(encoding="utf-8").split("\n")[:-1]
    assert sizes[0] == len(docnos) == docs[1]
    return lists, sizes[1:], docnos


def test_pisa_collection_imports_with_the_same_postings(cranfield_dir, tmp_path):
    pyterrier_pisa = pytest.importorskip("pyterrier_pisa")
    with open(cranfield_dir / "docs.jsonl", encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    pisa = pyterrier_pisa.PisaIndex(str(tmp_path / "pisa"), stemmer="porter2", threads=1)
    pisa.indexer(batch_size=len(docs) + 1).index(
        {"docno": d["id"], "text": d["title"] + "\n" + d["text"]} for d in docs)
    lists, sizes, docnos = _pisa_collection(tmp_path / "pisa")
    # PISA's collection as CIFF (what pyciff's pisa_to_ciff does), through ciff-toolkit.
    with open(tmp_path / "pisa.ciff", "wb") as f:
        w = MessageWriter(f)
        w.write_message(Header(version=1, num_postings_lists=len(lists), num_docs=len(sizes),
                               total_postings_lists=len(lists), total_docs=len(sizes),
                               total_terms_in_collection=int(sizes.sum()),
                               average_doclength=float(sizes.mean()),
                               description="from PISA's binary collection"))
        for t, (d, fr) in lists.items():
            w.write_message(PostingsList(
                term=t, df=len(d), cf=int(fr.sum()),
                postings=[Posting(docid=g, tf=x) for g, x in
                          zip(np.diff(d.astype(np.int64), prepend=0).tolist(), fr.tolist())]))
        for i, (n, s) in enumerate(zip(docnos, sizes.tolist())):
            w.write_message(DocRecord(docid=i, collection_docid=n, doclength=s))
    index = import_ciff(tmp_path / "pisa.ciff", tmp_path / "mirkit")
    assert index.terms() == sorted(lists, key=lambda t: t.encode("utf-8"))
    for t, (d, fr) in lists.items():
        got = index.postings(t)
        np.testing.assert_array_equal(got[0], d, err_msg=t)
        np.testing.assert_array_equal(got[1], fr, err_msg=t)
    assert index.doc_ids == docnos
    np.testing.assert_array_equal(index.doc_lengths, sizes)


def test_pisa_returns_mirkit_top_k_from_mirkit_ciff(cranfield_index, cranfield_queries,
                                                     tmp_path):
    pytest.importorskip("pyterrier_pisa")
    from pyterrier_pisa import _pisathon

    export_ciff(cranfield_index, tmp_path / "cran.ciff")
    # The CIFF as PISA's binary collection (what pyciff's ciff_to_pisa does).
    pisa = tmp_path / "pisa"
    pisa.mkdir()
    header, lists, docs = _read_ciff(tmp_path / "cran.ciff")
    with open(pisa / "inv.docs", "wb") as fd, open(pisa / "inv.freqs", "wb") as ff:
        fd.write(np.array([1, header.num_docs], np.uint32).tobytes())
        for t, (d, f, _, _) in lists.items():
            fd.write(np.concatenate([[len(d)], d]).astype(np.uint32).tobytes())
            ff.write(np.concatenate([[len(f)], f]).astype(np.uint32).tobytes())
    lengths = [n for _, _, n in docs]
    (pisa / "inv.sizes").write_bytes(np.array([len(docs)] + lengths, np.uint32).tobytes())
    (pisa / "fwd.terms").write_text("".join(t + "\n" for t in lists), encoding="utf-8")
    (pisa / "fwd.documents").write_text("".join(x + "\n" for _, x, _ in docs), encoding="utf-8")
    _pisathon.build_binlex(str(pisa / "fwd.terms"), str(pisa / "fwd.termlex"))
    _pisathon.build_binlex(str(pisa / "fwd.documents"), str(pisa / "fwd.doclex"))
    (pisa / "pt_meta.json").write_text(json.dumps({"type": "sparse_index", "format": "pisa",
                                                   "package_hint": "pyterrier-pisa",
                                                   "stemmer": "none"}))
    k1, b, k = 0.9, 0.4, 10
    ctxt = _pisathon.RetrievalContext()
    _pisathon.prepare_index(ctxt, str(pisa), "block_simdbp", "bm25", "", quantize=0,
                            bm25_k1=k1, bm25_b=b, stop_fname="")
    analyzer = cranfield_index.analyzer
    from collections import Counter

    queries = [(i, {t: float(c) for t, c in Counter(analyzer(q)).items()})
               for i, (_, q) in enumerate(cranfield_queries)]
    n = len(queries) * k
    qidx, docnos = np.empty(n, np.int32), np.empty(n, dtype=object)
    ranks, pscores = np.empty(n, np.int32), np.empty(n, np.float32)
    size = _pisathon.retrieve(ctxt, "maxscore", queries, k=k, threads=1, pretokenised=True,
                              query_weighted=1, result_qidxs=qidx, result_docnos=docnos,
                              result_ranks=ranks, result_scores=pscores)
    searcher = Searcher(cranfield_index)
    # PISA's BM25 idf is log((N - n + 0.5) / (n + 0.5)) clipped below at 1e-6 (and times
    # k1 + 1); mirkit's idf="rsj" clips at 0: the same ranking wherever some document scores
    # above the handful that hold only the query's most common terms.
    scorer = BM25(k1=k1, b=b, idf="rsj")
    mismatched = compared = 0
    for i, (_, q) in enumerate(cranfield_queries):
        mine = searcher.search(q, k, algorithm="exhaustive", scorer=scorer)
        theirs = slice(*np.searchsorted(qidx[:size], [i, i + 1]))
        t_docs, t_scores = docnos[:size][theirs], pscores[:size][theirs].astype(np.float64)
        m_docs = [cranfield_index.doc_ids[d] for d in mine.docids]
        m_scores = mine.scores.astype(np.float64)
        assert len(t_docs) == len(m_docs) or np.any(m_scores <= 0)
        np.testing.assert_allclose(t_scores[:len(m_scores)], m_scores, rtol=2e-5, atol=2e-5)
        # Equal documents at every rank whose score stands apart from its neighbours'.
        for r, d in enumerate(m_docs):
            near = np.abs(m_scores - m_scores[r]) <= 2e-5
            if near.sum() == 1 and m_scores[r] > 0:
                mismatched += d != t_docs[r]
                compared += 1
    assert mismatched == 0 and compared > 0.9 * k * len(cranfield_queries)


def test_docstring_examples():
    import doctest

    import mirkit.index.ciff

    failed, attempted = doctest.testmod(mirkit.index.ciff)
    assert attempted > 0 and failed == 0


def test_header_announcing_too_many_documents_allocates_nothing_large(tmp_path):
    h, lists, docs = _good()
    h.num_docs = 2 ** 31 - 1  # two records follow, not two billion
    _write_ciff(tmp_path / "big.ciff", h, lists, docs)
    with pytest.raises(CiffFormatError, match="doc record 2: the file ends before it"):
        import_ciff(tmp_path / "big.ciff", tmp_path / "out")
