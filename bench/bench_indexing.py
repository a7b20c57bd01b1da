"""Indexing throughput next to tantivy and bm25s (``mirkit bench indexing`` prints the full table).

Here each system first builds the corpus (5,000 documents) in this process, with the builder the
benchmark times, and its index is checked against a pure-Python inverted index of the same
documents under the same tokenization:

- mirkit: every term's postings (docids and frequencies), every document length, the term set,
  against tests/reference/scoring.py's inversion with the index's analyzer;
- tantivy (``en_stem`` field): for probe terms of every document frequency, a term query finds
  exactly the documents whose tokens, by the same tokenizer chain run in Python
  (``TextAnalyzer.analyze``), contain the term;
- bm25s: for the same kind of probe terms, a one-term query scores exactly the documents whose
  ``bm25s.tokenize`` tokens contain it, with numpy's BM25 (bm25s's Lucene variant and defaults).

Then each build is timed once in a fresh process (peak memory is the build's own), so CI checks
that every builder runs and reports sane numbers; with pytest-benchmark enabled the in-process
mirkit build is timed.
"""

from collections import Counter, defaultdict

import numpy as np
import pytest

from mirkit.benchmarks import indexing

CORPORA = ["synthetic-5000", "gcide"]
N_PROBES = 150


@pytest.fixture(scope="module", params=CORPORA)
def corpus(request):
    """(name, the 5,000 documents that `indexing.measure(..., quick=True)` builds)."""
    try:
        return request.param, indexing.load_corpus(request.param, quick=True)
    except FileNotFoundError as e:
        pytest.skip(f"shared data absent: {e}")


def _probe_terms(doc_sets: dict) -> list:
    """The 30 terms in most documents and N_PROBES more spread over the vocabulary by
    document frequency (seeded), down to terms of a single document."""
    by_df = sorted(doc_sets, key=lambda t: (-len(doc_sets[t]), t))
    rng = np.random.default_rng(0)
    spread = rng.choice(len(by_df), size=min(N_PROBES, len(by_df)), replace=False)
    return sorted(set(by_df[:30]) | {by_df[i] for i in spread}, key=by_df.index)


def _check_mirkit(docs, path):
    from reference import scoring as ref

    from mirkit.index import Index

    index = Index.open(path)
    postings, lengths = ref.invert([text for _, text in docs], index.analyzer)
    assert list(index.doc_ids) == [doc_id for doc_id, _ in docs]
    np.testing.assert_array_equal(index.doc_lengths, lengths)
    assert sorted(index.terms()) == sorted(postings)

    def same(term, docids, freqs):
        got_docids, got_freqs = index.postings(term)
        return (np.array_equal(got_docids, docids) and np.array_equal(got_freqs, freqs)
                and index.df(term) == docids.size)

    wrong = [term for term, (docids, freqs) in postings.items() if not same(term, docids, freqs)]
    assert wrong == [], f"{len(wrong)} terms' postings differ, e.g. {wrong[:5]}"


def _check_tantivy(docs, path, field="body"):
    import tantivy

    # en_stem: the simple tokenizer, tokens of at most 40 bytes, lowercase, English stemmer.
    analyzer = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
                .filter(tantivy.Filter.remove_long(40)).filter(tantivy.Filter.lowercase())
                .filter(tantivy.Filter.stemmer("english")).build())
    doc_sets = defaultdict(set)
    for doc_id, text in docs:
        for token in analyzer.analyze(text):
            doc_sets[token].add(doc_id)
    index = tantivy.Index.open(str(path))
    searcher = index.searcher()
    assert searcher.num_docs == len(docs)
    for term in _probe_terms(doc_sets):
        query = tantivy.Query.term_query(index.schema, field, term)
        hits = searcher.search(query, len(docs), count=True)
        assert hits.count == len(doc_sets[term]), term
        found = {searcher.doc(address).get_first("id") for _, address in hits.hits}
        assert found == doc_sets[term], term


def _bm25s_stemmer():
    """The stemmer indexing's bm25s builder passes to bm25s.tokenize."""
    try:
        import Stemmer
    except ImportError:
        return None
    return Stemmer.Stemmer("english").stemWords


def _check_bm25s(docs, path):
    import bm25s

    # The builder's tokenization, as strings (PyStemmer's English stemmer when installed).
    tokens = bm25s.tokenize([text for _, text in docs], stopwords="en", return_ids=False,
                            stemmer=_bm25s_stemmer(), show_progress=False)
    tfs = [Counter(t) for t in tokens]
    lengths = np.array([len(t) for t in tokens], np.float64)
    doc_sets = defaultdict(set)
    for n, tf in enumerate(tfs):
        for term in tf:
            doc_sets[term].add(n)
    model = bm25s.BM25.load(str(path))
    k1, b, n_docs = model.k1, model.b, len(docs)
    assert (model.method, k1, b) == ("lucene", 1.5, 0.75)  # bm25s's defaults, as built
    for term in _probe_terms(doc_sets):
        ids, scores = model.retrieve([[term]], k=n_docs, show_progress=False)
        found = ids[0][scores[0] > 0]
        assert set(found.tolist()) == doc_sets[term], term
        # Lucene's BM25 (no (k1 + 1) factor), from the token counts.
        d = np.array(sorted(doc_sets[term]))
        tf = np.array([tfs[i][term] for i in d], np.float64)
        idf = np.log(1 + (n_docs - d.size + 0.5) / (d.size + 0.5))
        expected = idf * tf / (tf + k1 * (1 - b + b * lengths[d] / lengths.mean()))
        order = np.argsort(found)
        np.testing.assert_allclose(scores[0][scores[0] > 0][order], expected, rtol=1e-5,
                                   err_msg=term)


_CHECKS = {"mirkit": _check_mirkit, "tantivy": _check_tantivy, "bm25s": _check_bm25s}


@pytest.mark.parametrize("system", indexing.SYSTEMS)
def test_builds_side_by_side(system, corpus, tmp_path):
    pytest.importorskip(system)
    name, docs = corpus
    indexing._BUILDERS[system](docs, tmp_path / "index", 1, "1GB")
    _CHECKS[system](docs, tmp_path / "index")  # the index answers right, before any timing
    r = indexing.measure(system, name, 1, quick=True)
    assert r["docs"] == len(docs) and r["seconds"] > 0 and r["total_bytes"] > 0
    if system != "bm25s":
        assert r["postings_bytes"] > 0
    assert system in indexing.format_table([r])


@pytest.mark.parametrize("system", list(indexing._FILE_BUILDERS))
def test_file_builds_side_by_side(system, corpus, tmp_path):
    """From a JSON Lines file on disk (`file_report`): mirkit's index is the in-memory
    build's, byte for byte, and checked as above; tantivy's answers its probe terms."""
    pytest.importorskip(system)
    name, docs = corpus
    path = indexing.write_jsonl(docs, tmp_path / "docs.jsonl")
    for threads in (1, 2):
        indexing._FILE_BUILDERS[system](path, tmp_path / f"index{threads}", threads)
        if system == "mirkit":
            from mirkit.index import build_index

            _check_mirkit(docs, tmp_path / f"index{threads}")
            want = build_index(docs, tmp_path / f"memory{threads}", threads=1).path
            assert all((want / f.name).read_bytes() == f.read_bytes()
                       for f in (tmp_path / f"index{threads}").iterdir()
                       if f.name != "manifest.json")
        else:
            _check_tantivy(docs, tmp_path / f"index{threads}", field="text")
    r = indexing.measure_file(system, path, 2)
    assert r["n_docs"] == len(docs) and r["seconds"] > 0
    rows = [dict(r, corpus=name, docs=len(docs), file_bytes=path.stat().st_size)]
    assert system in indexing.format_file_table(rows)


def test_file_formats_read_in_batches(corpus, tmp_path):
    """The gzip'ed JSON Lines and TREC files of `file_report` (read in batches, each batch one
    worker's): every document indexed, the 2-thread index the 1-thread one byte for byte."""
    import gzip
    import shutil

    name, docs = corpus
    plain = indexing.write_jsonl(docs, tmp_path / "docs.jsonl")
    with open(plain, "rb") as f, gzip.open(tmp_path / "docs.jsonl.gz", "wb") as g:
        shutil.copyfileobj(f, g)
    indexing.write_trec(docs, tmp_path / "docs.trec")
    for fmt in ("jsonl.gz", "trec"):
        path = tmp_path / f"docs.{fmt}"
        files = []
        for threads in (1, 2):
            out = tmp_path / f"{fmt}-{threads}"
            assert indexing._FILE_BUILDERS["mirkit"](path, out, threads)["n_docs"] == len(docs)
            files.append({f.name: f.read_bytes() for f in out.iterdir()
                          if f.name != "manifest.json"})
        assert files[0] == files[1], fmt
    rows = [dict(indexing.measure_file("mirkit", tmp_path / "docs.trec", 2),
                 corpus=f"{name}.trec", docs=len(docs), file_bytes=1)]
    assert f"{name}.trec" in indexing.format_file_table(rows)


def test_mirkit_build(benchmark, tmp_path):
    from mirkit.index import build_index

    docs = indexing.load_corpus("synthetic-5000", quick=True)
    build_index(docs, tmp_path / "checked", threads=1)
    _check_mirkit(docs, tmp_path / "checked")  # before timing
    counter = iter(range(10**6))
    benchmark(lambda: build_index(docs, tmp_path / f"i{next(counter)}", threads=1))


# -- the living index (indexing.living_cases): appends, deletions, merges, segments ----------


def test_living_index_cases(tmp_path):
    """Every living-index case runs on a small collection and checks its output against a
    fresh build before timing (inside living_cases); the table lists each case."""
    rows = indexing.living_cases(1500, repeat=1, n_queries=40, work=tmp_path)
    cases = [r["case"] for r in rows]
    assert cases[:4] == ["full build (anchor)", "add 1% + commit", "delete 10% + commit",
                         "forced merge (2 segments, 10% deleted -> 1)"]
    assert [c.split(": ")[1] for c in cases[4:]] == ["merged (1 segment)", "1 segment",
                                                      "4 segments", "16 segments"]
    assert all(r["seconds"] > 0 and r["ratio"] > 0 for r in rows)
    assert rows[1]["docs"] == 15 and rows[2]["docs"] == 151
    table = indexing.format_living_table(rows)
    assert "| add 1% + commit | 15 |" in table and "<= 1.25x" in table
    assert not list(tmp_path.iterdir())  # the work directory is removed
