"""BM25F (mirkit.search.fielded): a numpy reference, every algorithm equal to exhaustive
scoring, per-field words, living indexes equal to a fresh build, errors."""

import json

import numpy as np
import pytest

from mirkit.analysis import Analyzer
from mirkit.index import Index, IndexWriter
from mirkit.search import ALGORITHMS, BM25F, Searcher
from mirkit.search.scoring import BM25
from mirkit.query import field_words
from tests.reference.bm25f import bm25f_scores, invert_fields, top_k
from tests.test_fields import FIELDS, corpus

PRUNED = [a for a in ALGORITHMS if a not in ("exhaustive", "and")]
SCORERS = [BM25F(), BM25F({"title": 3.0, "text": 1.0}, b={"title": 0.3, "text": 0.8}, k1=1.5),
           BM25F({"title": 0.0}, b=1.0, k1=0.0), BM25F({"text": 0.5}, b=0.0, k1=3.0)]


@pytest.fixture(scope="module")
def cranfield_fielded(cranfield_dir, tmp_path_factory):
    """Cranfield with its title and text fields, and the documents."""
    with open(cranfield_dir / "docs.jsonl", encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    path = tmp_path_factory.mktemp("cranf") / "idx"
    with IndexWriter(path, fields=FIELDS, threads=1) as w:
        w.add_documents(str(cranfield_dir / "docs.jsonl"))
    return Index.open(path), docs


def reference_query(text, fields=tuple(FIELDS)):
    """(term, field or None) pairs of a text query, analyzed as the searcher does."""
    out = []
    for field, word in field_words(text, fields):
        out += [(t, field) for t in Analyzer()(word)]
    return out


def resolved(scorer):
    w, b = scorer.resolve(tuple(FIELDS))
    return dict(zip(FIELDS, w)), dict(zip(FIELDS, b))


def check_against_reference(searcher, docs, queries, scorer, k=10):
    postings, lengths = invert_fields(docs, FIELDS, Analyzer())
    w, b = resolved(scorer)
    for q in queries:
        ref = top_k(bm25f_scores(reference_query(q), postings, lengths, w, b, scorer.k1), k)
        r = searcher.search(q, k, algorithm="exhaustive", scorer=scorer)
        assert len(r) == len(ref), q
        np.testing.assert_allclose(r.scores, [s for _, s in ref], rtol=1e-5, atol=1e-9)
        # Ids equal except where the reference's scores tie within float rounding.
        for (d, s), got in zip(ref, r.docids.tolist()):
            if d != got:
                assert abs(s - dict(ref).get(got, -1)) <= 1e-5 * s, q


def test_bm25f_equals_numpy_on_cranfield(cranfield_fielded, cranfield_queries):
    index, docs = cranfield_fielded
    s = Searcher(index)
    queries = [q for _, q in cranfield_queries[:12]]
    for scorer in SCORERS[:2]:
        check_against_reference(s, docs, queries, scorer)


@pytest.mark.parametrize("algorithm", PRUNED)
def test_every_algorithm_equals_exhaustive_on_cranfield(cranfield_fielded, cranfield_queries,
                                                        algorithm):
    index, _ = cranfield_fielded
    s = Searcher(index)
    queries = [q for _, q in cranfield_queries[:40]] + ["title:wing flow", "text:shock title:heat"]
    for scorer in SCORERS:
        for k in (1, 10, 100):
            want = s.search_batch(queries, k, algorithm="exhaustive", scorer=scorer, threads=1)
            got = s.search_batch(queries, k, algorithm=algorithm, scorer=scorer, threads=2)
            for q, a, b in zip(queries, want, got):
                assert a.ids == b.ids, (algorithm, scorer, k, q)
                np.testing.assert_array_equal(a.scores, b.scores)
            if algorithm == "bmw" and k == 10:  # pruning does prune
                assert sum(r.postings_scored for r in got) < sum(r.postings_scored for r in want)


def test_ranked_and_holds_every_term(cranfield_fielded):
    index, docs = cranfield_fielded
    s = Searcher(index)
    r = s.search("title:wing slipstream", 2000, algorithm="and", scorer=BM25F())
    postings, _ = invert_fields(docs, FIELDS, Analyzer())
    both = set(postings["title"]["wing"]) & (set(postings["title"].get("slipstream", {}))
                                             | set(postings["text"].get("slipstream", {})))
    assert len(both) > 3 and sorted(r.docids.tolist()) == sorted(both)
    assert len(s.search("title:wing nosuchword", 10, algorithm="and", scorer=BM25F())) == 0


def test_generated_corpus_and_per_field_words(tmp_path, rng):
    docs = corpus(rng, 250)
    with IndexWriter(tmp_path / "i", fields=FIELDS, threads=1) as w:
        w.add_documents(docs)
    s = Searcher(tmp_path / "i")
    queries = ["wing", "title:wing", "text:flow text:flow title:tip", "wing title:wing flow",
               "title:the of", "nosuchword", "title:nosuchword wing"]
    for scorer in SCORERS:
        check_against_reference(s, docs, queries, scorer, k=300)
    # A per-field word under the default BM25 scorer is scored as BM25F with weights 1 and
    # the index's k1 and b; a plain query stays BM25 over the joined text.
    k1, b = s.index.bm25["k1"], s.index.bm25["b"]
    check_against_reference(s, docs, ["title:wing flow"], BM25F(b=b, k1=k1), k=300)
    plain = s.search("wing flow", 300)
    assert plain.ids == Searcher(s.index, scorer="bm25").search("wing flow", 300).ids


def test_one_field_bm25f_is_bm25_of_that_field(tmp_path, rng):
    docs = corpus(rng, 200)
    with IndexWriter(tmp_path / "i", fields=FIELDS, threads=1) as w:
        w.add_documents(docs)
    with IndexWriter(tmp_path / "t", threads=1) as w:
        for d in docs:
            w.add(d["id"], d.get("text") or "")
    bm25 = Searcher(tmp_path / "t")
    s = Searcher(tmp_path / "i")
    for q in ("wing", "flow tip", "boundary layer heat"):
        a = s.search(q, 50, scorer=BM25F({"title": 0.0}, b=0.75, k1=1.2), algorithm="exhaustive")
        words = " ".join(f"text:{x}" for x in q.split())
        c = s.search(words, 50, scorer=BM25F(b=0.75, k1=1.2), algorithm="exhaustive")
        e = bm25.search(q, 50, scorer=BM25(k1=1.2, b=0.75), algorithm="exhaustive")
        np.testing.assert_allclose(c.scores, e.scores, rtol=1e-5)
        assert c.ids == e.ids or len(c) == 50  # equal up to ties at the cut
        if q == "wing":  # a title of weight 0 adds nothing; its idf has both fields' df
            n = int((a.scores > 0).sum())
            assert a.ids[:n] == e.ids[:n] and (a.scores[n:] == 0).all()


def segmented(path, docs, first: int, every: int) -> list:
    """A living index at `path` of two segments (docs[:first], then the rest) with every
    `every`-th document deleted; returns the live documents in order."""
    with IndexWriter.open(path, fields=FIELDS, threads=1, merge_policy=None) as w:
        w.add_documents(docs[:first])
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents(docs[first:])
        w.delete([d["id"] for d in docs[::every]])
    return [d for d in docs if d["id"] not in {x["id"] for x in docs[::every]}]


def test_living_index_equals_a_fresh_build(tmp_path, rng):
    path = tmp_path / "live"
    live = segmented(path, corpus(rng, 240), 100, 5)
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.update("d1", {"title": "wing wing", "text": "flow"})
    live = [d for d in live if d["id"] != "d1"] + [{"id": "d1", "title": "wing wing",
                                                      "text": "flow"}]
    with IndexWriter(tmp_path / "fresh", fields=FIELDS, threads=1) as w:
        w.add_documents(live)
    fresh, seg = Searcher(tmp_path / "fresh"), Searcher(path)
    queries = ["wing", "title:wing flow", "tip shock heat boundary", "text:layer the"]
    for scorer in SCORERS[1:3]:
        for algorithm in ALGORITHMS:
            for q in queries:
                a = fresh.search(q, 20, algorithm=algorithm, scorer=scorer)
                b = seg.search(q, 20, algorithm=algorithm, scorer=scorer)
                assert a.ids == b.ids and a.docids.tolist() == b.docids.tolist(), (q, algorithm)
                np.testing.assert_array_equal(a.scores, b.scores)
    with IndexWriter.open(path, threads=1) as w:
        w.merge(1)
    merged = Searcher(path)
    for q in queries:
        assert merged.search(q, 20, scorer=SCORERS[1]).ids == fresh.search(
            q, 20, scorer=SCORERS[1]).ids


def test_filters_keep_the_scores_with_every_algorithm(tmp_path, rng):
    """A filtered BM25F query returns the passing documents of the unfiltered ranking, in its
    order and with its scores, with every algorithm, on a segmented index with deletions;
    filters of several kinds (internal docids, external ids, a Boolean string with a per-field
    word), one passing nothing."""
    path = tmp_path / "live"
    segmented(path, corpus(rng, 200), 90, 4)
    s = Searcher(path)
    scorer = SCORERS[1]
    filters = [np.arange(0, len(s.index), 3), set(s.index.doc_ids[::5]), "title:wing OR tip",
               "title:nosuchword"]
    for q in ("wing flow", "title:tip heat layer"):
        full = s.search(q, 1000, algorithm="exhaustive", scorer=scorer)
        for f in filters:
            passing = set(s.compile_filter(f).docids().tolist())
            want = [(i, x) for d, i, x in zip(full.docids.tolist(), full.ids, full.scores)
                    if d in passing][:7]
            for algorithm in [a for a in ALGORITHMS if a != "and"]:
                r = s.search(q, 7, algorithm=algorithm, scorer=scorer, filter=f)
                assert r.ids == [i for i, _ in want], (q, f, algorithm)
                assert r.scores.tolist() == [x for _, x in want]
            batch = s.search_batch([q], 7, scorer=scorer, filter=f, threads=1)[0]
            assert batch.ids == [i for i, _ in want]


def test_bm25f_errors(tmp_path):
    with IndexWriter(tmp_path / "i", fields=FIELDS, threads=1) as w:
        w.add("a", {"title": "wing", "text": "flow"})
    with IndexWriter(tmp_path / "plain", threads=1) as w:
        w.add("a", "wing: flow")
    s = Searcher(tmp_path / "i")
    with pytest.raises(ValueError, match="unknown field 'body'"):
        s.search("body:wing")
    with pytest.raises(ValueError, match="BM25F names field 'body'"):
        s.search("wing", scorer=BM25F({"body": 2.0}))
    with pytest.raises(ValueError, match="a phrase needs positions"):
        s.search('"wing flow"', scorer=BM25F())  # the index has no positions
    with pytest.raises(ValueError, match="vector= does not combine with BM25F"):
        s.search("wing", scorer=BM25F(), vector=[1.0])
    with pytest.raises(ValueError, match="scored with BM25F; the scorer is 'tfidf'"):
        s.search("title:wing", scorer="tfidf")
    with pytest.raises(ValueError, match="must be finite and >= 0"):
        BM25F({"title": -1.0})
    with pytest.raises(ValueError, match="b must be"):
        BM25F(b=1.5)
    with pytest.raises(TypeError, match="weights must be a mapping"):
        BM25F([1.0, 2.0])
    plain = Searcher(tmp_path / "plain")
    with pytest.raises(ValueError, match="the index has no text fields"):
        plain.search("wing", scorer=BM25F())
    assert plain.search("wing: flow").ids == ["a"]  # a colon stays punctuation there


def test_doctests():
    import doctest

    import mirkit.search.fielded

    failed, attempted = doctest.testmod(mirkit.search.fielded)
    assert attempted > 0 and failed == 0


def test_cli_fields_bm25f_and_lucene_syntax(tmp_path, capsys):
    from mirkit import cli

    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in [
        {"id": "a", "title": "wing tips", "text": "flow near the tip"},
        {"id": "b", "title": "flow", "text": "wing wing wing"},
        {"id": "c", "text": "flow over a tip"}]))
    assert cli.main(["index", str(docs), "-o", str(tmp_path / "i"), "--fields", "title,text",
                     "-q", "--threads", "1"]) == 0
    assert index_fields_of(tmp_path / "i") == ("title", "text")
    capsys.readouterr()
    assert cli.main(["stats", str(tmp_path / "i")]) == 0
    assert "fields         title (avg length 1.00), text (avg length 2.67)" in \
        capsys.readouterr().out  # titles: wing tip | flow | none; texts: 3, 3 and 2 terms
    s = Searcher(tmp_path / "i")

    def hits(*argv):
        capsys.readouterr()
        assert cli.main(["search", str(tmp_path / "i"), *argv]) == 0
        lines = capsys.readouterr().out.strip().splitlines()
        assert lines[0].split() == ["rank", "id", "score"]
        return [line.split()[1] for line in lines[1:-1]]  # the last line counts the hits

    assert hits("wing", "--scorer", "bm25f", "--field-weight", "title=5") == \
        s.search("wing", scorer=BM25F({"title": 5.0})).ids == ["a", "b"]
    assert hits("wing", "--scorer", "bm25f", "--field-weight", "title=0.2", "--k1", "1.5") == \
        s.search("wing", scorer=BM25F({"title": 0.2}, k1=1.5)).ids == ["b", "a"]
    assert hits("title:flow") == ["b"]
    assert hits("flow -tip", "--syntax", "lucene") == s.search("flow -tip", syntax="lucene").ids \
        == ["b"]
    assert hits("flow -tip") == s.search("flow -tip").ids  # plain: -tip is a word
    for argv, message in ((["wing", "--field-weight", "title=2"], "--field-weight applies"),
                          (["wing", "--syntax", "lucene", "--fuzzy-syntax"], "contradicts"),
                          (["wing", "--scorer", "bm25f", "--field-weight", "title=x"],
                           "expected NAME=NUMBER"),
                          (["body:wing"], "unknown field 'body'")):
        capsys.readouterr()
        try:
            code = cli.main(["search", str(tmp_path / "i"), *argv])
        except SystemExit as e:  # argparse's usage line, then the error
            code = e.code
        err = capsys.readouterr().err
        assert code == 2 and err.strip().splitlines()[-1].startswith("mirkit search: error:")
        assert message in err and "Traceback" not in err, err


def index_fields_of(path):
    from mirkit.index.fields import index_fields

    return index_fields(Index.open(path))
