"""Every public name of the mirkit modules stays importable from where it was.

The list below was generated from the tree before mirkit/index, search, vectors, image and
evaluation became packages and documents.py became ingest.py (each public module's ``__all__``
plus the other public names it defined), and is kept as literal data: a name that disappears
from its module fails here, whatever the new layout.
"""

from __future__ import annotations

import importlib

import pytest

PUBLIC_NAMES = {
    'mirkit': [
        '__version__', 'analysis', 'attention', 'codecs', 'datasets', 'documents', 'geometry',
        'image', 'index', 'info', 'set_simd_level', 'simd_level', 'simd_limit', 'vectors'
    ],
    'mirkit.analysis': [
        'Analyzer', 'STOPWORDS', 'UNICODE_VERSION', 'porter_stem', 'tokenize'
    ],
    'mirkit.attention': [
        'MultiHeadAttention', 'from_bfloat16', 'kernel', 'scaled_dot_product_attention',
        'sinusoidal_positions', 'to_bfloat16'
    ],
    'mirkit.search.expand': [
        'MAX_EXPANSIONS', 'MIN_LITERAL_PREFIX', 'expand_query', 'expand_term', 'fuzzy_terms',
        'is_multi_term'
    ],
    'mirkit.benchmarks.spelling': [
        'MAX_DISTANCE', 'fuzzy_rows', 'fuzzy_words', 'queries_and_lexicon', 'report', 'rows'
    ],
    'mirkit.text': [
        'METRICS', 'cdist', 'distance', 'distances', 'levenshtein', 'osa'
    ],
    'mirkit.benchmarks.attention': [
        'IMPLS', 'QUICK_SHAPES', 'SHAPES', 'flops', 'format_table', 'measure', 'numpy_attention',
        'report'
    ],
    'mirkit.benchmarks.codecs': [
        'ANCHORS', 'PFOR_CODECS', 'datasets', 'elias_fano_size_rows', 'rows'
    ],
    'mirkit.benchmarks.data': [
        'PostingLists', 'data_dir', 'lexicon', 'real_posting_lists', 'synthetic_gaps',
        'synthetic_posting_lists'
    ],
    'mirkit.benchmarks.distributed': [
        'K', 'Row', 'SHARDS', 'SearchRow', 'WORKERS', 'format_search_table', 'format_table',
        'measure', 'measure_search', 'report'
    ],
    'mirkit.benchmarks.evaluation': [
        'MEASURES', 'rows', 'synthetic'
    ],
    'mirkit.benchmarks.filters': [
        'BORDER', 'SIGMAS', 'SIZES', 'report', 'rows', 'summary'
    ],
    'mirkit.benchmarks.harness': [
        'Result', 'Row', 'format_table', 'run', 'time_call', 'write_json'
    ],
    'mirkit.benchmarks.image_search': [
        'affine_images', 'evaluate', 'report'
    ],
    'mirkit.benchmarks.indexing': [
        'SYSTEMS', 'format_table', 'load_corpus', 'measure', 'report'
    ],
    'mirkit.benchmarks.keypoints': [
        'Features', 'METHODS', 'RATIO', 'SCALE_FACTOR', 'TOLERANCE_PX', 'accuracy', 'evaluate_pair',
        'format_accuracy', 'format_timing', 'pairs', 'report', 'timing'
    ],
    'mirkit.benchmarks.query': [
        'B', 'Engine', 'K1', 'K_VALUES', 'MODULES', 'PISA_ALGORITHMS', 'SUBSET_DOCS',
        'SUBSET_QUERIES', 'SYNTHETIC_QUERIES', 'SYSTEMS', 'Timing', 'check_mirkit_agreement',
        'engines', 'format_tables', 'hitting_queries', 'load_queries', 'map_queries', 'measure',
        'report', 'synthetic_query_words', 'tantivy_analyzer', 'tantivy_index', 'tantivy_query',
        'term_ranks', 'time_breakdown'
    ],
    'mirkit.benchmarks.vectors': [
        'gaussian_mixture', 'report', 'sift'
    ],
    'mirkit.cli': [
        'BENCHMARKS', 'EXIT_USER_ERROR', 'IMAGE_SUFFIXES', 'UserError', 'main'
    ],
    'mirkit.codecs': [
        'Codec', 'EliasFanoSequence', 'available', 'get'
    ],
    'mirkit.datasets': [
        'CorpusStatistics', 'SyntheticCorpus', 'SyntheticCorpusParams', 'corpus_statistics',
        'synthetic_corpus'
    ],
    'mirkit.distributed': [
        'DistributedSearcher', 'FORMAT_VERSION', 'ShardedIndex', 'build_index'
    ],
    'mirkit.documents': [
        'DocBatch', 'DocumentReader', 'ITERABLE', 'InputError', 'InputTypeError', 'read_documents'
    ],
    'mirkit.evaluation': [
        'Comparison', 'Evaluation', 'Evaluator', 'MEASURES', 'Qrels', 'Run', 'TestResult',
        'compare', 'evaluate', 'paired_ttest', 'parse_measures', 'read_qrels', 'read_queries',
        'read_run', 'run_lines', 'trec_scores', 'wilcoxon', 'write_qrels', 'write_run'
    ],
    'mirkit.feedback': [
        'Rocchio'
    ],
    'mirkit.geometry': [
        'HomographyFit', 'apply_homography', 'find_homography', 'fit_homography', 'local_scale'
    ],
    'mirkit.image': [
        'BORDERS', 'KEYPOINT_DTYPE', 'SIFT', 'ScaleSpace', 'box_filter', 'derivative',
        'gaussian_blur', 'gaussian_gradient', 'gaussian_kernel', 'gradient_magnitude_orientation',
        'laplacian', 'laplacian_of_gaussian', 'scale_space', 'sep_filter'
    ],
    'mirkit.image_search': [
        'FORMAT', 'FORMAT_VERSION', 'ImageIndex', 'ImageSearchResult', 'load_image'
    ],
    'mirkit.index': [
        'BLOCK_SIZE', 'DEFAULT_CODEC', 'DocVectors', 'FORMAT_VERSION', 'Index', 'IndexCorruptError',
        'IndexStats', 'IndexVersionError', 'IndexWriter', 'MEMORY_OVERHEAD', 'PostingCursor',
        'build_index'
    ],
    'mirkit.ltr': [
        'CrossValidation', 'FeatureExtractor', 'LambdaMART', 'NO_WINDOW', 'Reranked', 'Reranker',
        'cross_validate'
    ],
    'mirkit.scoring': [
        'BM25', 'IDF_FORMS', 'QueryLikelihood', 'SCORERS', 'Scorer', 'TFIDF', 'get_scorer'
    ],
    'mirkit.search': [
        'ALGORITHMS', 'SearchResult', 'Searcher', 'check_search_options'
    ],
    'mirkit.vectors': [
        'HammingLSH', 'KMeans', 'LSHIndex', 'LSHParams', 'Matches', 'MiniBatchKMeans', 'Neighbors',
        'VectorQuantizer', 'kernel_level', 'knn', 'match', 'suggest_lsh_params',
        'IVFIndex', 'IVFParams', 'ProductQuantizer', 'suggest_ivf_params'
    ],
}


@pytest.mark.parametrize("module", sorted(PUBLIC_NAMES))
def test_public_names_still_import(module):
    mod = importlib.import_module(module)  # mirkit.distributed imports dask only when used
    missing = [name for name in PUBLIC_NAMES[module] if not hasattr(mod, name)]
    assert not missing, f"{module} lost {missing}"
    exported = getattr(mod, "__all__", None)
    if exported is not None:
        assert len(set(exported)) == len(exported), f"{module}.__all__ has repeats"
        assert all(hasattr(mod, name) for name in exported), f"{module}.__all__ names a ghost"
