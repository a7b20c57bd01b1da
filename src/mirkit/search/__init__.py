"""Search: ranked retrieval with dynamic pruning (:mod:`mirkit.search.searcher`), its scorers
(:mod:`mirkit.search.scoring`), relevance feedback (:mod:`mirkit.search.feedback`) and Boolean
retrieval (``mirkit.search._boolean``)."""

from mirkit.search import searcher
from mirkit.search.searcher import (
    ALGORITHMS,
    Query,
    SearchResult,
    Searcher,
    check_search_options,
)

__all__ = ["ALGORITHMS", "SearchResult", "Searcher"]

# doctest.testmod(mirkit.search) runs the examples of what it exports.
__test__ = {"searcher": searcher, "Searcher": Searcher}
