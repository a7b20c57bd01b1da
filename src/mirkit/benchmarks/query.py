"""Query latency benchmark: mirkit's top-k algorithms next to PISA, tantivy, bm25s and rank_bm25.

Every system indexes the same documents and answers the same queries in one process
(``mirkit bench query``). Indexes are built once per corpus and kept in a cache directory.

Corpora
-------
- ``gcide``: the 126k GCIDE dictionary entries (title and text), real English.
- ``gcide-20k``: its first 20,000 entries and the first 300 hitting queries: the only corpus
  small enough for rank_bm25, which scores every document in pure Python.
- ``synthetic-N``: N documents of :func:`mirkit.datasets.synthetic_corpus` (seed 0), pseudo-words
  with GCIDE's Zipf and length statistics (default N = 5 million).

Queries
-------
The TREC 2005 Terabyte efficiency log (``queries-trec-tb05-efficiency``, 50,000 real web
queries, repeats kept, log order), only the queries with at least one analyzed term in mirkit's
index of the corpus. The synthetic corpus has no English words, so the log is mapped onto it by
frequency rank: each query term (after mirkit's analyzer) of rank r in GCIDE's collection
frequency order (1 = most frequent; terms absent from GCIDE are dropped) becomes the r-th
synthetic word in rank order (:meth:`SyntheticCorpusParams.words`) among those that every
system's analyzer keeps as they are: at least two letters, not a stopword, unchanged by the
Porter and Porter2 stemmers. Without that filter, frequent pseudo-words such as ``a``, ``be``
or ``do`` would be stopwords for some systems and index terms for others (all systems now index
mirkit's terms, see below; the filter keeps the mapping as it was). The kept word of
index r has synthetic rank r plus the words skipped before it (about 6% more: the 10,000th kept
word has rank 10,558), so its posting list is a little shorter than rank r's.

Systems
-------
All rank by BM25 top-k over the disjunction of the query terms; mirkit's defaults k1 = 0.9,
b = 0.4 (:data:`mirkit.scoring.BM25_K1`, :data:`~mirkit.scoring.BM25_B`) wherever they can be
set. Every system indexes the same terms: mirkit's analysis of each document (Unicode
tokenizer, lowercase, ASCII folding, mirkit's 150 stopwords, Porter (1980)), handed over as
pre-analyzed tokens; and each query is analyzed by mirkit's analyzer inside the timed call and
handed over as terms (a term twice in the query counts twice everywhere). So the systems differ
only in their BM25 variant, and each one's results can be checked exactly against numpy scoring
of that variant (bench/bench_query.py does, before timing):

- mirkit: :class:`mirkit.search.Searcher` over a default :func:`mirkit.index.build_index`
  index (built on two threads), every algorithm of :data:`mirkit.search.ALGORITHMS` (``and``
  is conjunctive, the rest return the same top k); Lucene's idf
  ``log(1 + (N - n + 0.5) / (n + 0.5))``, tf part ``(k1 + 1) tf / (tf + k1 (1 - b + b dl /
  avgdl))``.
- PISA (pyterrier-pisa): a ``block_simdbp`` index built from term counts (its "toks" indexer,
  no stemmer, no stopwords), block-max data over blocks of 64, ``block_max_wand``, ``wand``
  and ``maxscore`` on pre-tokenized weighted queries; its BM25 idf is Robertson-Sparck Jones's
  ``log((N - n + 0.5) / (n + 0.5))`` clipped at 1e-6, times ``k1 + 1``.
- tantivy: a ``freq`` text field of the terms joined by spaces, split by its whitespace
  tokenizer; queries are Boolean disjunctions of term queries, ``search(count=False)`` lets it
  prune (Block-Max WAND). Its BM25 has fixed k1 = 1.2, b = 0.75, Lucene's idf, and document
  lengths quantized to one byte (``FIELD_NORMS_TABLE``; the average length is not quantized).
- bm25s: the numba backend, ``method="lucene"``, indexing the term lists; the same idf as
  mirkit's and a tf part without the ``k1 + 1`` factor (the same ranking). It scores every
  document of the corpus for every query (dense accumulators).
- rank_bm25: ``BM25Okapi`` on the term lists (idf ``log((N - n + 0.5) / (n + 0.5))``, a
  negative one replaced by 0.25 of the mean idf of the vocabulary), scoring every document in
  Python; only on corpora of at most 20,000 documents.

:func:`tantivy_index` and :func:`tantivy_query` build the other kind of tantivy index, with its
own analyzer as close to mirkit's as it allows (Porter2 stemming): tests/test_effectiveness.py
compares the two whole pipelines by MAP.

Measurement
-----------
Each query is timed alone on one thread with ``time.perf_counter`` around the user-facing call,
including analysis of the query string (mirkit's analyzer, for every system) and the external
ids of the hits (``r.ids`` for mirkit, the docno strings PISA returns, a fast-field lookup into
the same id list for tantivy, an index into it for bm25s and rank_bm25; mirkit's ids come from
that list too, :attr:`Index.doc_ids`, cached before timing). After a warm-up, every system runs ``repeat`` passes, the
passes interleaved between systems so drifting machine noise hits all of them alike; a query's
latency is its median over the passes. Throughput uses two threads over the whole query list:
``Searcher.search_batch(threads=2)``, PISA's ``retrieve(threads=2)``, two Python threads for
tantivy (its search releases the GIL), bm25s's ``n_threads=2`` (numba); rank_bm25 has no
parallel mode. The objects alive before timing (every system's index, vocabulary, ...) are
frozen out of Python's cyclic garbage collector (:func:`gc.freeze`): in one process together
they would make each collection slower for whichever system allocates many container objects
per query (mirkit's results are not tracked by the collector, but the ids lists are). Before
timing, mirkit's ranked-OR algorithms are checked against ``exhaustive`` (same scores, same ids
up to ties), and each system's top 10 is compared with mirkit's (``overlap@10``: the terms are
the same, so it falls below 1 only by the BM25 variants: PISA's idf, tantivy's parameters and
quantized lengths, rank_bm25's idf floor). The
share of CPU time that other processes took while timing is printed too: two-thread throughput
means little on a busy machine.
"""

from __future__ import annotations

import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

import numpy as np

from mirkit.benchmarks.indexing import _available
from mirkit.search.scoring import BM25_B, BM25_K1

__all__ = [
    "K_VALUES",
    "MODULES",
    "SYSTEMS",
    "Engine",
    "Timing",
    "check_mirkit_agreement",
    "engines",
    "format_tables",
    "hitting_queries",
    "load_queries",
    "map_queries",
    "measure",
    "report",
    "synthetic_query_words",
    "term_ranks",
    "time_breakdown",
]

K1, B = BM25_K1, BM25_B  # mirkit's defaults, given to every system
K_VALUES = (10, 1000)
SYSTEMS = ("mirkit", "pisa", "tantivy", "bm25s", "rank_bm25")
PISA_ALGORITHMS = ("block_max_wand", "wand", "maxscore")
SUBSET_DOCS, SUBSET_QUERIES = 20_000, 300
SYNTHETIC_QUERIES = 5_000  # bm25s's dense scoring takes ~10 ms a query on millions of docs
_DONE = "complete"  # marker file of a finished cached build
_TANTIVY_ANALYZER = "mirkit_en"
_TANTIVY_TERMS = "mirkit_terms"


@dataclass
class Engine:
    """One system (and algorithm) answering queries.

    ``search(text, k)`` answers one query on the calling thread and returns the external ids of
    the hits, best first; ``batch(texts, k, threads)`` answers them all on `threads` threads
    (None: no parallel mode).
    """

    system: str
    label: str
    search: Callable[[str, int], list]
    batch: Optional[Callable[[list, int, int], object]] = None


@dataclass
class Timing:
    """Measurements of one engine on one corpus at one k (milliseconds, queries/second)."""

    corpus: str
    system: str
    label: str
    k: int
    n_queries: int
    mean_ms: float
    median_ms: float
    p99_ms: float
    qps: Optional[float]
    overlap10: float
    counters: dict = field(default_factory=dict)


# ---------------------------------------------------------------- documents and queries

def _docs(corpus: str, quick: bool) -> list:
    """``(id, text)`` pairs of a corpus name (see the module notes)."""
    from mirkit.benchmarks.indexing import load_corpus

    if corpus == "gcide-20k":
        return load_corpus("gcide", quick)[:SUBSET_DOCS]
    return load_corpus(corpus, quick)


def load_queries(limit: Optional[int] = None) -> list:
    """Query strings of the TREC 2005 efficiency log in log order (repeats kept).

    Raises
    ------
    FileNotFoundError
        If the shared data directory or the log is missing.
    """
    from mirkit.benchmarks.data import data_dir

    base = data_dir()
    path = base / "queries-trec-tb05-efficiency" / "queries.tsv" if base else None
    if path is None or not path.is_file():
        raise FileNotFoundError("../shared/data/queries-trec-tb05-efficiency is absent")
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            out.append(line.rstrip("\n").split("\t", 1)[1])
            if limit is not None and len(out) == limit:
                break
    return out


def hitting_queries(queries: Sequence[str], index, limit: Optional[int] = None) -> list:
    """The queries with at least one analyzed term in `index`, in order, at most `limit`."""
    out = []
    for q in queries:
        if any(index.term_id(t) is not None for t in index.analyzer(q)):
            out.append(q)
            if limit is not None and len(out) == limit:
                break
    return out


def term_ranks(index) -> np.ndarray:
    """Frequency rank (1 = largest collection frequency, ties by term id) of every term id."""
    cf = np.asarray(index.reader.cf)
    ranks = np.empty(cf.size, np.int64)
    ranks[np.argsort(-cf.astype(np.int64), kind="stable")] = np.arange(1, cf.size + 1)
    return ranks


def _porter2():
    try:
        import Stemmer
    except ImportError:
        return None
    return Stemmer.Stemmer("english").stemWords


def synthetic_query_words(n: int, params=None) -> list:
    """The first `n` synthetic words in rank order that every system's analyzer keeps as they
    are (two letters or more, not a stopword, unchanged by the Porter and Porter2 stemmers)."""
    from mirkit.analysis import STOPWORDS, Analyzer
    from mirkit.datasets import SyntheticCorpusParams

    params = params or SyntheticCorpusParams()
    analyzer, porter2 = Analyzer(), _porter2()
    kept: list = []
    start, step = 1, max(2 * n, 1024)
    while len(kept) < n:
        words = params.words(np.arange(start, start + step))
        stems = porter2(words) if porter2 else words
        kept += [w for w, s in zip(words, stems)
                 if len(w) > 1 and w == s and w not in STOPWORDS and analyzer(w) == [w]]
        start += step
    return kept[:n]


def map_queries(queries: Sequence[str], index, words: Optional[list] = None) -> list:
    """Map queries onto the synthetic corpus by frequency rank in `index` (see the module notes).

    Query terms absent from `index` are dropped, and so are queries left empty. `words` are the
    synthetic words by rank, at least as many as the largest rank used (default:
    :func:`synthetic_query_words` of that many).
    """
    ranks = term_ranks(index)
    analyzed = []
    for q in queries:
        ids = [index.term_id(t) for t in index.analyzer(q)]
        r = [int(ranks[t]) for t in ids if t is not None]
        if r:
            analyzed.append(r)
    if words is None:
        words = synthetic_query_words(max((max(r) for r in analyzed), default=0))
    return [" ".join(words[x - 1] for x in r) for r in analyzed]


# ---------------------------------------------------------------- engines

def _mirkit(index) -> list:
    from mirkit.search import ALGORITHMS, Searcher

    searcher = Searcher(index)
    index.doc_ids  # noqa: B018 - cache the id list that r.ids (and tantivy, bm25s) index into

    def make(algorithm):
        def search(q, k):
            return searcher.search(q, k=k, algorithm=algorithm).ids

        def batch(qs, k, threads):
            return [r.ids for r in searcher.search_batch(qs, k=k, algorithm=algorithm,
                                                         threads=threads)]

        return Engine("mirkit", f"mirkit {algorithm}", search, batch)

    return [make(a) for a in ALGORITHMS]


def _stopword_file(path: Path) -> Path:
    from mirkit.analysis import STOPWORDS

    file = path / "stopwords.txt"
    file.write_text("".join(w + "\n" for w in sorted(STOPWORDS)), encoding="utf-8")
    return file


@contextmanager
def _output_to(file: Path):
    """Send file descriptors 1 and 2 (what C++ code prints) to `file` for a while."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(file, "ab") as f:
            os.dup2(f.fileno(), 1)
            os.dup2(f.fileno(), 2)
            yield
    finally:
        for fd, copy in zip((1, 2), saved):
            os.dup2(copy, fd)
            os.close(copy)


def _analyzed(docs: list, analyzer, batch: int = 10_000):
    """``(id, terms)`` of every document, by `analyzer`, a batch of texts at a time."""
    for start in range(0, len(docs), batch):
        chunk = docs[start:start + batch]
        yield from zip((doc_id for doc_id, _ in chunk),
                       analyzer.analyze_many([text for _, text in chunk]))


def _pisa(docs: Callable[[], list], path: Path, analyzer) -> list:
    import pyterrier_pisa
    from pyterrier_pisa import _pisathon

    index = pyterrier_pisa.PisaIndex(str(path), stemmer="none", threads=2)
    ctxt = _pisathon.RetrievalContext()
    with _output_to(path.parent / "pisa.log"):  # PISA's C++ logs and progress bars
        if not index.built():  # from term counts: no tokenizer, stemmer or stopwords of its own
            index.toks_indexer(text_field="toks", scale=1.0).index(
                {"docno": str(doc_id), "toks": dict(Counter(terms))}
                for doc_id, terms in _analyzed(docs(), analyzer))
        # The first preparation with these BM25 parameters computes the block-max data and
        # compresses the index; later runs map the files.
        _pisathon.prepare_index(ctxt, str(path), "block_simdbp", "bm25", "", quantize=0,
                                bm25_k1=K1, bm25_b=B, stop_fname="")

    def run(algorithm, queries, k, threads):
        n = len(queries) * k
        docnos = np.empty(n, dtype=object)
        size = _pisathon.retrieve(
            ctxt, algorithm, [(i, {t: float(c) for t, c in Counter(analyzer(q)).items()})
                              for i, q in queries],
            k=k, threads=threads, pretokenised=True, query_weighted=1,
            result_qidxs=np.empty(n, np.int32), result_docnos=docnos,
            result_ranks=np.empty(n, np.int32), result_scores=np.empty(n, np.float32))
        return docnos[:size]

    def make(algorithm):
        def search(q, k):
            return run(algorithm, [(0, q)], k, 1).tolist()

        def batch(qs, k, threads):
            return run(algorithm, list(enumerate(qs)), k, threads)

        return Engine("pisa", f"PISA {algorithm}", search, batch)

    return [make(a) for a in PISA_ALGORITHMS]


def tantivy_analyzer():
    """tantivy's analyzer closest to mirkit's: letters and digits, lowercase, ASCII folding,
    tokens up to 64 bytes, mirkit's stopwords, Porter2."""
    import tantivy
    from mirkit.analysis import STOPWORDS

    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(65))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.ascii_fold())
            .filter(tantivy.Filter.custom_stopword(sorted(STOPWORDS)))
            .filter(tantivy.Filter.stemmer("english"))
            .build())


def tantivy_index(docs: Callable[[], list], path: Path):
    """Open (or build) a tantivy index of `docs` with a ``body`` text field analyzed by
    :func:`tantivy_analyzer` and a fast ``n`` field holding each document's position."""
    return _tantivy_open(lambda: (text for _, text in docs()), path, _TANTIVY_ANALYZER,
                         tantivy_analyzer)


def _tantivy_open(texts: Callable[[], Iterable[str]], path: Path, name: str,
                  make_analyzer: Callable):
    """Open (or build, once: a marker file says it is complete) a tantivy index whose ``body``
    field holds `texts` analyzed by the tokenizer `name` (made by `make_analyzer`), with a fast
    ``n`` field holding each document's position."""
    import tantivy

    if not (path / _DONE).is_file():
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        sb = tantivy.SchemaBuilder()
        sb.add_integer_field("n", fast=True)
        sb.add_text_field("body", tokenizer_name=name, index_option="freq")
        index = tantivy.Index(sb.build(), path=str(path))
        index.register_tokenizer(name, make_analyzer())
        writer = index.writer(heap_size=400_000_000, num_threads=2)
        for n, text in enumerate(texts()):
            writer.add_document(tantivy.Document(n=n, body=text))
        writer.commit()
        writer.wait_merging_threads()
        (path / _DONE).touch()
    index = tantivy.Index.open(str(path))
    index.register_tokenizer(name, make_analyzer())
    return index


def tantivy_query(index, text: str):
    """`text` as a disjunction of its terms for tantivy's query parser.

    Lowercase, so that no word is an operator (``AND``), and every character that is not a
    letter or digit becomes a space: no syntax is left, and no word splits into several tokens,
    which the parser would turn into a phrase query (the field has no positions).
    """
    return index.parse_query("".join(c if c.isalnum() else " " for c in text.lower()), ["body"])


def _tantivy_terms_analyzer():
    """Splits at spaces, nothing else: the field holds mirkit's terms joined by spaces."""
    import tantivy

    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()


def _tantivy(docs: Callable[[], list], path: Path, ids: list, analyzer) -> list:
    import tantivy

    index = _tantivy_open(lambda: (" ".join(terms) for _, terms in _analyzed(docs(), analyzer)),
                          path, _TANTIVY_TERMS, _tantivy_terms_analyzer)
    searcher, schema = index.searcher(), index.schema
    should = tantivy.Occur.Should

    def search(q, k):
        terms = analyzer(q)
        if not terms:
            return []
        query = tantivy.Query.boolean_query(
            [(should, tantivy.Query.term_query(schema, "body", t)) for t in terms])
        hits = searcher.search(query, k, count=False).hits
        return [ids[n] for n in searcher.fast_field_values("n", [a for _, a in hits])]

    def batch(qs, k, threads):
        # one share of the queries per thread, so the pool costs nothing per query
        with ThreadPoolExecutor(threads) as pool:
            shares = pool.map(lambda share: [search(q, k) for q in share],
                              [qs[i::threads] for i in range(threads)])
            return [hits for share in shares for hits in share]

    return [Engine("tantivy", "tantivy", search, batch)]


def _bm25s(docs: Callable[[], list], path: Path, ids: list, analyzer) -> list:
    import bm25s

    if not (path / _DONE).is_file():
        shutil.rmtree(path, ignore_errors=True)
        model = bm25s.BM25(k1=K1, b=B, method="lucene", backend="numba")
        model.index([terms for _, terms in _analyzed(docs(), analyzer)], show_progress=False)
        model.save(str(path))
        (path / _DONE).touch()
    model = bm25s.BM25.load(str(path), override_params={"backend": "numba"}, show_progress=False)
    vocab = model.vocab_dict

    def known(texts):
        # bm25s refuses a query without a known token; the caller gets no hits for it
        return [[t for t in analyzer(q) if t in vocab] for q in texts]

    def search(q, k):
        tokens = known([q])
        if not tokens[0]:
            return []
        found, scores = model.retrieve(tokens, k=k, n_threads=1, show_progress=False)
        return [ids[i] for i, s in zip(found[0].tolist(), scores[0].tolist()) if s > 0]

    def batch(qs, k, threads):
        tokens = [t for t in known(qs) if t]
        found, _ = model.retrieve(tokens, k=k, n_threads=threads, show_progress=False)
        return [[ids[i] for i in row] for row in found.tolist()]

    return [Engine("bm25s", "bm25s (numba)", search, batch)]


def _rank_bm25(docs: list, index) -> list:
    from rank_bm25 import BM25Okapi

    analyzer, ids = index.analyzer, index.doc_ids
    model = BM25Okapi(analyzer.analyze_many([t for _, t in docs]), k1=K1, b=B)

    def search(q, k):
        scores = model.get_scores(analyzer(q))
        top = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
        top = top[np.argsort(-scores[top], kind="stable")]
        return [ids[i] for i in top[scores[top] > 0].tolist()]

    return [Engine("rank_bm25", "rank_bm25 BM25Okapi", search, None)]


#: The package each anchor system needs.
MODULES = {"pisa": "pyterrier_pisa", "tantivy": "tantivy", "bm25s": "bm25s",
            "rank_bm25": "rank_bm25"}


def engines(corpus: str, cache_dir, *, quick: bool = False, systems: Sequence[str] = SYSTEMS,
            out=sys.stdout) -> tuple:
    """Build (or open from `cache_dir`) every available system's index of `corpus`.

    Returns ``(mirkit_index, engines)``; a system whose package is missing is left out with a
    note on `out`. rank_bm25 runs only on corpora of at most 20,000 documents.
    """
    from mirkit.index import Index, build_index

    root = Path(cache_dir) / (corpus + ("-quick" if quick else ""))
    root.mkdir(parents=True, exist_ok=True)
    docs = lru_cache(maxsize=1)(lambda: _docs(corpus, quick))
    path = root / "mirkit"
    index = (Index.open(path, verify=False) if (path / "manifest.json").is_file()
             else build_index(docs(), path, threads=2))
    found = _mirkit(index)
    for system in systems:
        if system == "mirkit":
            continue
        if not _available(MODULES[system]):
            print(f"skipping {system}: {MODULES[system]} is not installed", file=out)
            continue
        # (directories named for what they hold: mirkit's terms, not the systems' own analysis)
        if system == "pisa":
            found += _pisa(docs, root / "pisa-terms", index.analyzer)
        elif system == "tantivy":
            found += _tantivy(docs, root / "tantivy-terms", index.doc_ids, index.analyzer)
        elif system == "bm25s":
            found += _bm25s(docs, root / "bm25s-terms", index.doc_ids, index.analyzer)
        elif system == "rank_bm25" and len(index) <= SUBSET_DOCS:
            found += _rank_bm25(docs(), index)
    return index, found


# ---------------------------------------------------------------- checks and timing

def check_mirkit_agreement(index, queries: Sequence[str], ks: Sequence[int] = K_VALUES) -> int:
    """Check that every ranked-OR algorithm returns exhaustive's top k (scores within 1e-5
    relative, ids equal above the k-th score); returns the number of results compared.

    Raises
    ------
    AssertionError
        Naming the algorithm, k and query of the first disagreement.
    """
    from mirkit.search import ALGORITHMS, Searcher

    searcher, checked = Searcher(index), 0
    for k in ks:
        ref = searcher.search_batch(list(queries), k=k, algorithm="exhaustive", threads=2)
        for algorithm in ALGORITHMS:
            if algorithm in ("exhaustive", "and"):
                continue
            got = searcher.search_batch(list(queries), k=k, algorithm=algorithm, threads=2)
            for q, a, b in zip(queries, ref, got):
                if not _same_top_k(a, b):
                    raise AssertionError(f"{algorithm} differs from exhaustive at k={k} on "
                                         f"{q!r}: {b.docids[:10]} {b.scores[:10]} vs "
                                         f"{a.docids[:10]} {a.scores[:10]}")
                checked += 1
    return checked


def _same_top_k(a, b) -> bool:
    if len(a) != len(b) or not np.allclose(a.scores, b.scores, rtol=1e-5, atol=1e-9):
        return False
    if not len(a):
        return True
    cut = a.scores[-1] + 1e-5 * abs(a.scores[-1])
    return set(a.docids[a.scores > cut].tolist()) == set(b.docids[b.scores > cut].tolist())


def _overlap(reference: list, got: list) -> float:
    pairs = [(set(r[:10]), set(g[:10])) for r, g in zip(reference, got) if r]
    return float(np.mean([len(r & g) / len(r) for r, g in pairs])) if pairs else float("nan")


def _one_pass(engine: Engine, queries: Sequence[str], k: int) -> np.ndarray:
    search, times = engine.search, np.empty(len(queries))
    clock = time.perf_counter
    for i, q in enumerate(queries):
        start = clock()
        search(q, k)
        times[i] = clock() - start
    return times


def measure(corpus: str, index, found: Sequence[Engine], queries: Sequence[str], *,
            ks: Sequence[int] = K_VALUES, repeat: int = 3, threads: int = 2,
            warmup: int = 500) -> list:
    """Time every engine at every k; return one :class:`Timing` each (see the module notes)."""
    gc.collect()
    gc.freeze()
    try:
        return _measure(corpus, index, found, list(queries), ks, repeat, threads, warmup)
    finally:
        gc.unfreeze()


def _measure(corpus, index, found, queries, ks, repeat, threads, warmup) -> list:
    from mirkit.search import Searcher

    sample = queries[:1000]
    reference = [next(e for e in found if e.label == "mirkit exhaustive").search(q, 10)
                 for q in sample]
    overlap = {e.label: _overlap(reference, [e.search(q, 10) for q in sample]) for e in found}
    out = []
    for k in ks:
        for e in found:  # warm-up: page in the index, compile numba, fill caches
            for q in queries[:warmup]:
                e.search(q, k)
            if e.batch is not None:
                e.batch(queries[:warmup], k, threads)
        single = {e.label: [] for e in found}
        batch = {e.label: [] for e in found}
        for _ in range(repeat):  # passes interleaved between systems
            for e in found:
                single[e.label].append(_one_pass(e, queries, k))
                if e.batch is not None:
                    start = time.perf_counter()
                    e.batch(queries, k, threads)
                    batch[e.label].append(len(queries) / (time.perf_counter() - start))
        searcher = Searcher(index)
        for e in found:
            ms = np.median(np.vstack(single[e.label]), axis=0) * 1e3
            counters = {}
            if e.system == "mirkit":
                rs = searcher.search_batch(queries, k=k, algorithm=e.label.split()[-1],
                                           threads=threads)
                counters = {c: float(np.mean([getattr(r, c) for r in rs]))
                            for c in ("postings_decoded", "postings_scored", "docs_scored")}
            out.append(Timing(corpus, e.system, e.label, k, len(queries), float(ms.mean()),
                              float(np.median(ms)), float(np.percentile(ms, 99)),
                              statistics.median(batch[e.label]) if batch[e.label] else None,
                              overlap[e.label], counters))
    return out


def _cpu_snapshot() -> Optional[tuple]:
    """(wall seconds, machine busy CPU seconds, this process's CPU seconds); None off Linux."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            ticks = [int(v) for v in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    busy = sum(ticks) - ticks[3] - ticks[4]  # all but idle and iowait; steal counts as busy
    own = os.times()
    return time.perf_counter(), busy / os.sysconf("SC_CLK_TCK"), own.user + own.system


def _other_load(start: Optional[tuple]) -> Optional[float]:
    """Share of the machine's CPU time that other processes (or the hypervisor) took since
    `start`: two-thread throughput is only meaningful when it is small."""
    end = _cpu_snapshot()
    if start is None or end is None or end[0] <= start[0]:
        return None
    other = (end[1] - start[1]) - (end[2] - start[2])
    return max(other, 0.0) / ((end[0] - start[0]) * (os.cpu_count() or 1))


def time_breakdown(index, queries: Sequence[str], algorithm: str, k: int) -> dict:
    """Where a mirkit query's time goes, in mean microseconds per query (one thread, best of
    three passes each): ``search`` (``Searcher.search`` of the query string: analysis in the
    C++ engine, the search, the result object) and ``ids`` (the external ids of the hits, read
    from fresh results)."""
    from mirkit.search import Searcher

    searcher = Searcher(index)

    def best(fn, passes) -> float:
        times = []
        for data in passes:
            start = time.perf_counter()
            fn(data)
            times.append(time.perf_counter() - start)
        return min(times) / len(queries) * 1e6

    fresh = [[searcher.search(q, k=k, algorithm=algorithm) for q in queries] for _ in range(3)]
    return {"search": best(lambda _: [searcher.search(q, k=k, algorithm=algorithm)
                                      for q in queries], range(3)),
            "ids": best(lambda results: [r.ids for r in results], fresh)}


# ---------------------------------------------------------------- report

def _queries_for(corpus: str, index, quick: bool, max_queries: Optional[int], cache_dir,
                 out) -> tuple:
    """The corpus's query list and a sentence on how it was made."""
    log = load_queries()
    limit = 200 if quick else max_queries
    if limit is None and corpus == "gcide-20k":
        limit = SUBSET_QUERIES
    elif limit is None and corpus.startswith("synthetic-"):
        limit = SYNTHETIC_QUERIES
    if not corpus.startswith("synthetic-"):
        qs = hitting_queries(log, index, limit)
        return qs, f"the first {len(qs):,} TREC 2005 efficiency queries that hit the index"
    gcide, _ = engines("gcide", cache_dir, quick=quick, systems=("mirkit",), out=out)
    qs = hitting_queries(map_queries(log, gcide), index, limit)
    return qs, (f"the first {len(qs):,} TREC 2005 efficiency queries mapped onto the synthetic "
                "words by GCIDE frequency rank (module notes) that hit the index")


def report(quick: bool = False, repeat: int = 3, corpora: Optional[Sequence[str]] = None, *,
           synthetic_docs: int = 5_000_000, cache_dir=None, max_queries: Optional[int] = None,
           out=sys.stdout) -> list:
    """Run every available system on every corpus at k = 10 and 1000; print markdown tables.

    Parameters
    ----------
    quick : bool
        5,000 documents per corpus and 200 queries, for a smoke run.
    repeat : int
        Timing passes; a query's latency is its median over them.
    corpora : sequence of str, optional
        Default ``("gcide", "gcide-20k", f"synthetic-{synthetic_docs}")``; with `quick`,
        ``("gcide", "synthetic-5000")`` (rank_bm25 then runs on both).
    synthetic_docs : int
        Size of the default synthetic corpus.
    cache_dir : path, optional
        Where indexes are built and kept between runs (default: a temporary directory,
        removed at the end).
    max_queries : int, optional
        At most this many queries per corpus (default: every hitting query of the log on
        ``gcide``, 300 on ``gcide-20k``, 5,000 on a synthetic corpus).

    Returns
    -------
    list of Timing
    """
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be an int >= 1, got {repeat!r}")
    if corpora is None:
        corpora = (("gcide", "synthetic-5000") if quick else
                   ("gcide", "gcide-20k", f"synthetic-{synthetic_docs}"))
    tmp = None
    if cache_dir is None:
        cache_dir = tmp = tempfile.mkdtemp(prefix="mirkit-bench-query-")
    rows = []
    try:
        load_queries(1)
        for corpus in corpora:
            try:
                start = time.perf_counter()
                index, found = engines(corpus, cache_dir, quick=quick, out=out)
                built = time.perf_counter() - start
                queries, how = _queries_for(corpus, index, quick, max_queries, cache_dir, out)
            except FileNotFoundError as e:
                print(f"skipping {corpus}: {e}", file=out)
                continue
            checked = check_mirkit_agreement(index, queries[:200])
            start = _cpu_snapshot()
            timings = measure(corpus, index, found, queries, repeat=repeat)
            other = _other_load(start)
            rows += timings
            print(f"\n#### {corpus}: {len(index):,} documents, {how}; indexes ready in "
                  f"{built:.0f} s; {checked:,} mirkit results checked against exhaustive"
                  + ("" if other is None else f"; other processes took {other:.0%} of the "
                     "CPUs while timing") + "\n", file=out)
            print(format_tables(timings), file=out)
            for k in K_VALUES:
                ours = _fastest([t for t in timings if t.k == k], "mirkit")
                parts = time_breakdown(index, queries, ours.label.split()[-1], k)
                print(f"- {ours.label} at k={k}, mean microseconds a query: " + ", ".join(
                    f"{name} {us:.1f}" for name, us in parts.items()), file=out)
    except FileNotFoundError as e:
        print(f"skipping: {e}", file=out)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return rows


def _fastest(rows: list, system: str, exclude=("exhaustive", "taat", "and")) -> Optional[Timing]:
    cands = [r for r in rows if r.system == system and r.label.split()[-1] not in exclude]
    return min(cands, key=lambda r: r.mean_ms, default=None)


def format_tables(rows: list) -> str:
    """One markdown table per corpus and k, then the latency ratios against the anchors."""
    lines = []
    for key in dict.fromkeys((r.corpus, r.k) for r in rows):
        rs = [r for r in rows if (r.corpus, r.k) == key]
        exhaustive = next((r for r in rs if r.label == "mirkit exhaustive"), None)
        lines += [f"\n##### {key[0]}, k={key[1]} ({rs[0].n_queries:,} queries)\n",
                  "| system | mean ms | median ms | p99 ms | QPS (2 threads) | overlap@10 "
                  "| postings decoded | postings scored | docs scored | exhaustive/this scored |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in rs:
            c = r.counters
            ratio = (f"{exhaustive.counters['postings_scored'] / c['postings_scored']:.1f}"
                     if c and exhaustive and c["postings_scored"] else "")
            counts = " | ".join(f"{c[n]:,.0f}" if c else "" for n in
                                ("postings_decoded", "postings_scored", "docs_scored"))
            lines.append(f"| {r.label} | {r.mean_ms:.3f} | {r.median_ms:.3f} | {r.p99_ms:.2f} | "
                         f"{'' if r.qps is None else f'{r.qps:,.0f}'} | {r.overlap10:.2f} | "
                         f"{counts} | {ratio} |")
        ours = _fastest(rs, "mirkit")
        if ours is None:
            continue
        lines.append("")
        for system in SYSTEMS[1:]:
            theirs = _fastest(rs, system)
            if theirs is None:
                continue
            q = (f"; QPS {ours.label} / {theirs.label} = {ours.qps / theirs.qps:.2f}"
                 if ours.qps and theirs.qps else "")
            lines.append(f"- {theirs.label} mean / {ours.label} mean = "
                         f"{theirs.mean_ms / ours.mean_ms:.2f} (above 1: mirkit faster){q}")
    return "\n".join(lines)


if __name__ == "__main__":
    report(quick="--quick" in sys.argv)
