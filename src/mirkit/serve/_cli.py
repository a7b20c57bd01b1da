"""``mirkit serve INDEX``: the service of :mod:`mirkit.serve` under uvicorn."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from dataclasses import asdict

__all__ = ["add_parser", "app_from_environment"]

_CONFIG = "MIRKIT_SERVE_CONFIG"  # how each uvicorn worker process learns what to serve


def _api_key(args):
    if args.api_key_env and args.api_key_file:
        raise ValueError("give --api-key-env or --api-key-file, not both")
    if args.api_key_env:
        key = os.environ.get(args.api_key_env)
        if not key:
            raise ValueError(f"--api-key-env: the environment variable {args.api_key_env} is "
                             "not set or empty")
        return key
    if args.api_key_file:
        with open(args.api_key_file, encoding="utf-8") as f:
            key = f.read().strip()
        if not key:
            raise ValueError(f"--api-key-file: {args.api_key_file} is empty")
        return key
    return None


def app_from_environment():
    """The application described by ``$MIRKIT_SERVE_CONFIG`` (uvicorn's factory, in each
    worker process)."""
    from mirkit.serve.app import ServeLimits, create_app

    config = json.loads(os.environ[_CONFIG])
    key = None
    if config["api_key_env"]:
        key = os.environ.get(config["api_key_env"])
    elif config["api_key_file"]:
        with open(config["api_key_file"], encoding="utf-8") as f:
            key = f.read().strip()
    return create_app(config["index"], image_index=config["image_index"],
                      images=config["images"], allow_writes=config["allow_writes"],
                      api_key=key, limits=ServeLimits(**config["limits"]))


def _cmd_serve(args) -> int:
    try:
        import uvicorn
    except ImportError:
        raise ValueError("mirkit serve needs the serve extra: pip install 'mirkit[serve]'") \
            from None
    from mirkit.serve.app import ServeLimits, create_app

    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be between 0 and 65535, got {args.port}")
    if args.workers < 1:
        raise ValueError(f"--workers must be >= 1, got {args.workers}")
    if args.allow_writes and args.workers > 1:
        raise ValueError("--allow-writes needs --workers 1: one process holds the index's "
                         "writer (readers of other processes see its commits)")
    limits = ServeLimits(max_k=args.max_k, timeout=args.timeout,
                         max_body_bytes=args.max_body_bytes,
                         max_upload_bytes=args.max_upload_bytes,
                         max_query_chars=args.max_query_chars, threads=args.threads)
    key = _api_key(args)
    if key is not None and not args.allow_writes:
        raise ValueError("an API key is for writes: add --allow-writes")
    # Checked here, once, so that a mistake is one line and not a worker's traceback.
    create_app(args.index, image_index=args.image_index, images=args.images,
               allow_writes=args.allow_writes, api_key=key, limits=limits)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"mirkit serve: warning: listening on {args.host}, not only this machine; "
              "put TLS and access control in front of it", file=sys.stderr)
    if args.workers > 1 and (args.http == "h11" or (
            args.http in (None, "auto") and importlib.util.find_spec("httptools") is None)):
        print("mirkit serve: warning: uvicorn's h11 parser on several workers answered "
              "keep-alive requests about 45 ms late in mirkit bench serve; install httptools "
              "and uvloop, or keep --workers 1", file=sys.stderr)
    os.environ[_CONFIG] = json.dumps({
        "index": args.index, "image_index": args.image_index, "images": args.images,
        "allow_writes": args.allow_writes, "api_key_env": args.api_key_env,
        "api_key_file": args.api_key_file, "limits": asdict(limits)})
    options = {"http": args.http} if args.http else {}
    if args.loop:
        options["loop"] = args.loop
    uvicorn.run("mirkit.serve._cli:app_from_environment", factory=True, host=args.host,
                port=args.port, workers=args.workers, log_level=args.log_level,
                access_log=args.access_log, timeout_graceful_shutdown=args.graceful_timeout,
                **options)
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser(
        "serve", help="serve an index over HTTP: a JSON API and a search page",
        description="Serves INDEX (a text index, or an image index) over HTTP with uvicorn: "
        "GET /search, POST /search, GET /documents/ID, GET /stats, GET /health, "
        "POST /images/search, the page at /, the API at /openapi.json. Writes "
        "(POST /documents, DELETE /documents/ID, POST /commit) need --allow-writes and an "
        "API key, sent in the X-API-Key header. SIGTERM or Ctrl-C stops it gracefully: "
        "requests in flight finish, then the writer commits what was acknowledged.")
    p.add_argument("index", metavar="INDEX")
    p.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1: this "
                   "machine only)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--threads", type=int, default=16,
                   help="search threads per worker process (default 16)")
    p.add_argument("--image-index", metavar="DIR", help="an image index served beside INDEX")
    p.add_argument("--images", metavar="DIR", help="the folder the image index was built "
                   "from: the page shows the matched pictures")
    p.add_argument("--allow-writes", action="store_true",
                   help="accept POST /documents, DELETE /documents/ID and POST /commit")
    p.add_argument("--api-key-env", metavar="VAR",
                   help="the environment variable holding the API key of writes")
    p.add_argument("--api-key-file", metavar="FILE", help="a file holding the API key")
    p.add_argument("--max-k", type=int, default=1000,
                   help="largest offset + k of a search (default 1000)")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds a search may take before a 503 (default 10)")
    p.add_argument("--max-body-bytes", type=int, default=1 << 20,
                   help="largest JSON body (default 1 MiB)")
    p.add_argument("--max-upload-bytes", type=int, default=16 << 20,
                   help="largest image upload (default 16 MiB)")
    p.add_argument("--max-query-chars", type=int, default=1024,
                   help="longest query or filter (default 1024 characters)")
    p.add_argument("--graceful-timeout", type=float, default=30.0,
                   help="seconds requests in flight get to finish on SIGTERM (default 30)")
    p.add_argument("--http", choices=["auto", "h11", "httptools"], default=None,
                   help="uvicorn's HTTP parser (default: httptools when installed)")
    p.add_argument("--loop", choices=["auto", "asyncio", "uvloop"], default=None,
                   help="uvicorn's event loop (default: uvloop when installed)")
    p.add_argument("--log-level", default="warning",
                   choices=["critical", "error", "warning", "info", "debug"])
    p.add_argument("--access-log", action="store_true", help="log every request")
    p.set_defaults(func=_cmd_serve)
