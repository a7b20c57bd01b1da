"""Search: ranked retrieval with dynamic pruning (:mod:`mirkit.search.searcher`), its queries
(:mod:`mirkit.search.query`) and scorers (:mod:`mirkit.search.scoring`), relevance feedback
(:mod:`mirkit.search.feedback`), Boolean retrieval (``mirkit.search._boolean``) and hybrid text +
vector search (:mod:`mirkit.search.hybrid`)."""

from mirkit.search import hybrid, searcher
from mirkit.search.fielded import BM25F
from mirkit.search.hybrid import HybridResult
from mirkit.search.query import Query
from mirkit.search.searcher import ALGORITHMS, SearchResult, Searcher, check_search_options

__all__ = ["ALGORITHMS", "BM25F", "HybridResult", "SearchResult", "Searcher"]

# doctest.testmod(mirkit.search) runs the examples of what it exports.
__test__ = {"BM25F": BM25F, "searcher": searcher, "Searcher": Searcher, "hybrid": hybrid}
