"""`gqa serve`: the HTTP service and web page."""

from __future__ import annotations

import os
from typing import Optional

import typer

from gretriever_neo4j.cli.app import app, connection_settings, console


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="address to bind; anything but loopback needs --token"),
    port: int = typer.Option(8765, "--port", min=1, max=65535),
    token: Optional[str] = typer.Option(None, "--token", help="required bearer token [env GQA_SERVE_TOKEN]"),
    max_question_chars: int = typer.Option(1000, "--max-question-chars", min=1),
    max_body_bytes: int = typer.Option(16_384, "--max-body-bytes", min=256),
    max_queue: int = typer.Option(8, "--max-queue", min=1, help="answers generating or waiting; more get 429"),
    embedder: Optional[str] = typer.Option(None, "--embedder"),
    llm: Optional[str] = typer.Option(None, "--llm", help="HF causal LM id or path [default smollm2-135m]"),
    device: str = typer.Option("auto", "--device"),
    preload: Optional[str] = typer.Option(None, "--preload", help="comma-separated graphs whose models load at "
                                          "start"),
) -> None:
    """Serve the API (/docs) and the web page (/) until interrupted."""
    from gretriever_neo4j.service import ServiceConfig, check_bind
    from gretriever_neo4j.service import serve as run

    config = ServiceConfig(host=host, port=port, token=token or os.environ.get("GQA_SERVE_TOKEN") or None,
                           max_question_chars=max_question_chars, max_body_bytes=max_body_bytes, max_queue=max_queue,
                           embedder=embedder, llm=llm, device=device,
                           preload=tuple(g for g in (preload or "").split(",") if g))
    check_bind(config)
    _limit_malloc_arenas()
    shown = f"[{host}]" if ":" in host else host
    console.print(f"gqa serving on http://{shown}:{port}/ (API docs at /docs); Ctrl-C stops it")
    run(config, connection_settings())


def _limit_malloc_arenas(arenas: int = 2) -> None:
    """glibc gives every thread that allocates its own malloc arena; a threaded server whose requests allocate
    numpy and torch buffers then grows its RSS for long after its working set stopped growing."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(-8, arenas)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass  # not glibc: nothing to tune
