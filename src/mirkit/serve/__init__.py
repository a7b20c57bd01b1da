"""``mirkit serve``: an index behind an HTTP API and a web page (Starlette under uvicorn).

:func:`create_app` makes the ASGI application of an index directory (text, image, or both):
``GET /search`` and ``POST /search`` (batches), ``GET /documents/{id}``, ``GET /stats``,
``GET /health``, ``POST /images/search``, and with ``allow_writes=True`` and an API key
``POST /documents``, ``DELETE /documents/{id}`` and ``POST /commit``; ``GET /openapi.json``
describes them (:data:`mirkit.serve.openapi.SCHEMA`) and ``GET /`` is the page. The README's
"A search service" section says why Starlette and uvicorn, and how the service is made safe.

It needs the ``serve`` extra (``pip install "mirkit[serve]"``: starlette, uvicorn,
python-multipart).
"""

from __future__ import annotations

__all__ = ["ServeLimits", "create_app"]


def __getattr__(name):  # the app imports starlette: only when asked for
    if name in __all__:
        from mirkit.serve import app

        return getattr(app, name)
    raise AttributeError(name)
