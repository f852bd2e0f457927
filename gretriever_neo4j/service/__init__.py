"""`gqa serve`: an HTTP service (FastAPI on uvicorn) and a web page over the same library calls as the CLI.

`build_runtime` opens one Neo4j driver and loads the embedder and the answering models once; `serve` runs the
app until interrupted. Only a loopback address may be served without a token.
"""

from __future__ import annotations

import logging
import threading

from gretriever_neo4j.service.runtime import Runtime, ServiceConfig, is_loopback

log = logging.getLogger(__name__)


def build_runtime(config: ServiceConfig, settings) -> Runtime:
    from gretriever_neo4j.answering.answering import Answering
    from gretriever_neo4j.embedding.embedder import Embedder
    from gretriever_neo4j.qa.qa import QA
    from gretriever_neo4j.retrievers.cached import GraphCache
    from gretriever_neo4j.store.graph_store import GraphStore, open_driver

    driver = open_driver(settings, retry_s=config.neo4j_retry_s)
    store = GraphStore(driver, settings.database)
    embedder = Embedder(config.embedder)
    answering = Answering(embedder, llm=config.llm, device=config.device)
    cache = GraphCache(store)
    qa = QA(store, embedder, browser_url=settings.browser_url, answering=answering, cache=cache)
    runtime = Runtime(config, store, qa)
    runtime.driver = driver
    runtime.cache = cache
    for graph in config.preload:
        answering.reader(graph)
        cache.load_in_background(graph)
        threading.Thread(target=_warm_retriever, args=(qa, graph), name=f"gqa-warm-{graph}", daemon=True).start()
    threading.Thread(target=_warm_graphs, args=(runtime,), name="gqa-stats", daemon=True).start()
    return runtime


def _warm_retriever(qa, graph: str) -> None:
    """The preloaded graph's retriever does its one-time work (relation paths: embedding every relation text)
    before the first question."""
    try:
        retriever = qa.retriever(graph, "auto")
        if hasattr(retriever, "warm"):
            retriever.warm(graph)
    except Exception as error:  # the first request that needs it will report it
        log.warning("could not prepare the retriever of %s at start: %s", graph, error)


def _warm_graphs(runtime: Runtime) -> None:
    """The web page lists the graphs first thing; their statistics take a full scan, done before anyone asks."""
    try:
        runtime.graphs()
    except Exception as error:  # the request that needs them will report it
        log.warning("could not compute the graph statistics at start: %s", error)


def check_bind(config: ServiceConfig) -> None:
    from gretriever_neo4j.errors import ConfigError

    if not is_loopback(config.host) and not config.token:
        raise ConfigError(f"serving on {config.host} (not a loopback address) needs a token: --token or "
                          f"GQA_SERVE_TOKEN; clients then send 'Authorization: Bearer <token>'")


def serve(config: ServiceConfig, settings) -> None:
    import uvicorn

    from gretriever_neo4j import quiet, threads
    from gretriever_neo4j.service.app import create_app

    check_bind(config)
    quiet.configure_logging()
    threads.one_blas_thread()
    runtime = build_runtime(config, settings)
    try:
        uvicorn.run(create_app(runtime), host=config.host, port=config.port, log_level="warning",
                    timeout_graceful_shutdown=5)
    finally:
        runtime.driver.close()


__all__ = ["Runtime", "ServiceConfig", "build_runtime", "check_bind", "serve"]
