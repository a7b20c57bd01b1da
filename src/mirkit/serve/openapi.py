"""The OpenAPI 3.1 description of ``mirkit serve`` (``GET /openapi.json``), written by hand:
every route of :mod:`mirkit.serve.app` with its parameters, request bodies and response
bodies (tests/test_serve.py checks that each route is here and that the answers validate)."""

from __future__ import annotations

__all__ = ["SCHEMA"]


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(name: str, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": _ref(name)}}}


_ERRORS = {str(s): _json("Error", d) for s, d in (
    (400, "A malformed request: a bad parameter or field, bad JSON, invalid UTF-8"),
    (404, "No such document, image or route"),
    (413, "A body or image over the server's limit"),
    (414, "A query string over the server's limit"),
    (503, "The request took longer than the server's time limit"))}
_WRITE_ERRORS = {**_ERRORS, **{str(s): _json("Error", d) for s, d in (
    (401, "No valid API key in the X-API-Key header"),
    (403, "Writes are disabled (the server was started without --allow-writes)"),
    (409, "A document with this id exists (send \"update\": true)"))}}


def _param(name: str, schema: dict, description: str, where: str = "query",
           required: bool = False) -> dict:
    return {"name": name, "in": where, "required": required, "schema": schema,
            "description": description}


_SEARCH_PARAMS = [
    _param("q", {"type": "string"}, "The query (the index's analyzer; quoted phrases)",
           required=True),
    _param("k", {"type": "integer", "minimum": 1, "default": 10}, "Results (offset + k at "
           "most the server's max_k)"),
    _param("offset", {"type": "integer", "minimum": 0, "default": 0}, "Results skipped (paging)"),
    _param("algorithm", {"type": "string", "enum": ["taat", "exhaustive", "and", "wand", "bmw",
                                                    "maxscore"], "default": "bmw"},
           "Top-k algorithm (all but 'and' give the same results)"),
    _param("scorer", {"type": "string", "enum": ["bm25", "tfidf", "ql"]},
           "Scorer (default: BM25 with the index's parameters)"),
    _param("filter", {"type": "string"}, "Filter: field predicates or a Boolean query "
           "(year >= 1990 AND lang:en)"),
    _param("snippets", {"type": "boolean", "default": True}, "Snippets and titles from the "
           "document store (when the index has one)"),
    _param("facets", {"type": "boolean", "default": False}, "Counts of the keyword fields' "
           "values among the best max_k results"),
]
_COMMIT = _param("commit", {"type": "boolean", "default": False},
                 "Commit at once: the change is durable when the answer is sent")
_ID = _param("id", {"type": "string"}, "The document's external id", where="path",
             required=True)
_KEY = [{"apiKey": []}]

_HIT = {"type": "object", "required": ["rank", "id", "score"], "additionalProperties": False,
        "properties": {
            "rank": {"type": "integer", "minimum": 1},
            "id": {"type": "string"},
            "score": {"type": "number"},
            "title": {"type": ["string", "null"]},
            "snippets": {"type": "array", "items": {"type": "string"},
                         "description": "HTML-escaped text; the only markup is <b>...</b> "
                         "around the query's words"}}}
_RESULT = {"type": "object", "additionalProperties": False,
           "required": ["query", "k", "offset", "generation", "took_ms", "hits"],
           "properties": {
               "query": {"type": "string"}, "k": {"type": "integer"},
               "offset": {"type": "integer"},
               "generation": {"type": ["integer", "null"],
                              "description": "The commit searched (null: not a living index)"},
               "took_ms": {"type": "number"},
               "hits": {"type": "array", "items": _ref("Hit")},
               "facets": {"type": "object", "description": "With facets: per keyword field, "
                          "{value: count} among the best max_k results",
                          "additionalProperties": {"type": "object", "additionalProperties": {
                              "type": "integer", "minimum": 1}}}}}
_IMAGE_HIT = {"type": "object", "required": ["rank", "id", "score", "image"],
              "additionalProperties": False, "properties": {
                  "rank": {"type": "integer", "minimum": 1}, "id": {"type": "string"},
                  "score": {"type": "number"},
                  "image": {"type": ["string", "null"], "description": "URL of the picture"},
                  "inliers": {"type": "integer", "minimum": 0},
                  "matches": {"type": "array", "description": "Verified matches: query x, "
                              "query y, x, y", "items": {"type": "array", "items": {
                                  "type": "number"}, "minItems": 4, "maxItems": 4}}}}
_DOCUMENT_IN = {"type": "object", "required": ["id", "text"], "additionalProperties": False,
                "properties": {"id": {"type": "string", "minLength": 1},
                               "text": {"type": ["string", "object"]},
                               "fields": {"type": "object", "description": "Numeric and "
                                          "keyword field values"}}}

SCHEMA = {
    "openapi": "3.1.0",
    "info": {"title": "mirkit serve", "version": "1",
             "description": "Search an index of mirkit: ranked text search with snippets, "
             "stored documents, image search by example, and (with --allow-writes) changes."},
    "components": {
        "securitySchemes": {"apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"}},
        "schemas": {
            "Error": {"type": "object", "required": ["error"], "additionalProperties": False,
                      "properties": {"error": {"type": "string"}}},
            "Hit": _HIT,
            "SearchResult": _RESULT,
            "BatchResult": {"type": "object", "required": ["results", "took_ms"],
                            "additionalProperties": False, "properties": {
                                "results": {"type": "array", "items": _ref("SearchResult")},
                                "took_ms": {"type": "number"}}},
            "BatchRequest": {"type": "object", "required": ["queries"],
                             "additionalProperties": False, "properties": {
                                 "queries": {"type": "array", "minItems": 1,
                                             "items": {"type": "string"}},
                                 **{p["name"]: p["schema"] for p in _SEARCH_PARAMS[1:]}}},
            "Document": {"type": "object", "required": ["id", "docid", "generation", "document"],
                         "additionalProperties": False, "properties": {
                             "id": {"type": "string"}, "docid": {"type": "integer"},
                             "generation": {"type": ["integer", "null"]},
                             "document": {"type": "object",
                                          "description": "The stored fields, as indexed"}}},
            "Stats": {"type": "object", "required": ["writes", "limits"], "properties": {
                "writes": {"type": "boolean"}, "limits": {"type": "object"},
                "index": {"type": "object", "required": ["n_docs", "n_terms", "generation",
                                                         "keyword_fields"], "properties": {
                    "n_docs": {"type": "integer"}, "n_terms": {"type": "integer"},
                    "avg_doc_length": {"type": "number"},
                    "generation": {"type": ["integer", "null"]},
                    "segments": {"type": "integer"}, "positions": {"type": "boolean"},
                    "store": {"type": "boolean"},
                    "numeric_fields": {"type": "array", "items": {"type": "string"}},
                    "keyword_fields": {"type": "object", "additionalProperties": {
                        "type": "array", "items": {"type": "string"}}}}},
                "images": {"type": "object", "properties": {
                    "n_images": {"type": "integer"}, "n_words": {"type": "integer"},
                    "files": {"type": "integer"}}}}},
            "Health": {"type": "object", "required": ["status"],
                       "properties": {"status": {"const": "ok"}}},
            "ImageResult": {"type": "object", "additionalProperties": False,
                            "required": ["k", "verify", "width", "height", "took_ms", "hits"],
                            "properties": {
                                "k": {"type": "integer"}, "verify": {"type": "boolean"},
                                "width": {"type": "integer"}, "height": {"type": "integer"},
                                "took_ms": {"type": "number"},
                                "hits": {"type": "array", "items": _IMAGE_HIT}}},
            "DocumentsRequest": {"oneOf": [
                {**_DOCUMENT_IN, "properties": {**_DOCUMENT_IN["properties"],
                                                "commit": {"type": "boolean"},
                                                "update": {"type": "boolean"}}},
                {"type": "object", "required": ["documents"], "additionalProperties": False,
                 "properties": {"documents": {"type": "array", "minItems": 1,
                                              "items": _DOCUMENT_IN},
                                "commit": {"type": "boolean"}, "update": {"type": "boolean"}}}]},
            "WriteResult": {"type": "object", "required": ["committed"],
                            "additionalProperties": False, "properties": {
                                "added": {"type": "integer"}, "updated": {"type": "integer"},
                                "deleted": {"type": "integer"},
                                "committed": {"type": "boolean"},
                                "generation": {"type": "integer"}}},
        }},
    "paths": {
        "/": {"get": {"summary": "The search page (HTML)", "responses": {
            "200": {"description": "The page", "content": {"text/html": {}}}}}},
        "/static/{name}": {"get": {"summary": "The page's script and style sheet",
                                   "parameters": [_param("name", {"type": "string"}, "File",
                                                         where="path", required=True)],
                                   "responses": {"200": {"description": "The file"},
                                                 "404": _ERRORS["404"]}}},
        "/openapi.json": {"get": {"summary": "This description", "responses": {
            "200": {"description": "OpenAPI 3.1", "content": {"application/json": {}}}}}},
        "/empty": {"get": {"summary": "An empty answer: the HTTP floor (mirkit bench serve)",
                           "responses": {"200": {"description": "{}", "content": {
                               "application/json": {"schema": {"type": "object"}}}}}}},
        "/health": {"get": {"summary": "Liveness", "responses": {
            "200": _json("Health", "The server answers")}}},
        "/stats": {"get": {"summary": "The index's statistics, keyword field values, limits",
                           "responses": {"200": _json("Stats", "Statistics"), **_ERRORS}}},
        "/search": {
            "get": {"summary": "Ranked search: exactly Searcher.search", "parameters":
                    _SEARCH_PARAMS, "responses": {"200": _json("SearchResult", "Ranked hits"),
                                                  **_ERRORS}},
            "post": {"summary": "A batch of queries with the same options",
                     "requestBody": {"required": True, "content": {"application/json": {
                         "schema": _ref("BatchRequest")}}},
                     "responses": {"200": _json("BatchResult", "One result per query"),
                                   **_ERRORS}}},
        "/documents": {"post": {
            "summary": "Add (or update) documents", "security": _KEY,
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": _ref("DocumentsRequest")}}},
            "responses": {"200": _json("WriteResult", "Acknowledged (durable if committed)"),
                          **_WRITE_ERRORS}}},
        "/documents/{id}": {
            "get": {"summary": "A stored document", "parameters": [_ID],
                    "responses": {"200": _json("Document", "The document"), **_ERRORS}},
            "delete": {"summary": "Delete a document", "security": _KEY,
                       "parameters": [_ID, _COMMIT],
                       "responses": {"200": _json("WriteResult", "Deleted"),
                                     **_WRITE_ERRORS}}},
        "/commit": {"post": {"summary": "Commit the acknowledged changes", "security": _KEY,
                             "responses": {"200": _json("WriteResult", "Durable and visible"),
                                           **_WRITE_ERRORS}}},
        "/images/search": {"post": {
            "summary": "Image search by example, with the verified matches",
            "parameters": [
                _param("k", {"type": "integer", "minimum": 1, "default": 5}, "Results"),
                _param("verify", {"type": "boolean", "default": True},
                       "Spatial verification (RANSAC); matches come with it")],
            "requestBody": {"required": True, "content": {"multipart/form-data": {
                "schema": {"type": "object", "required": ["image"], "properties": {
                    "image": {"type": "string", "contentMediaType": "image/*"}}}}}},
            "responses": {"200": _json("ImageResult", "Ranked images"), **_ERRORS}}},
        "/images/{id}": {"get": {
            "summary": "The picture of an indexed image (when served with its folder)",
            "parameters": [_param("id", {"type": "string"}, "Image id", where="path",
                                  required=True)],
            "responses": {"200": {"description": "The image file", "content": {
                "image/*": {}}}, "404": _ERRORS["404"]}}},
    },
}
