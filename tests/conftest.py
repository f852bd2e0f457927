"""Shared fixtures. Integration tests talk to the real Neo4j server (`gqa db start`, or NEO4J_URI/NEO4J_PASSWORD).

Where no server answers, they are skipped — unless GQA_REQUIRE_NEO4J=1 (CI sets it), where that is a failure.
Each test writes under graph/dataset names of its own and deletes them afterwards.
"""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

# `gqa ask` uses a running `gqa serve` when one answers; tests must not reach a developer's server.
os.environ["GQA_SERVER"] = "off"

# Helpers shared by several folders (`from cli_helpers import gqa`) are importable from every test.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is not there")
    return SHARED_DATA


@pytest.fixture(scope="session")
def neo4j_settings():
    from gretriever_neo4j.errors import DatabaseError
    from gretriever_neo4j.settings import Neo4jSettings
    from gretriever_neo4j.store.graph_store import open_driver

    settings = Neo4jSettings.from_env()
    try:
        open_driver(settings).close()
    except DatabaseError as error:
        if os.environ.get("GQA_REQUIRE_NEO4J") == "1":
            pytest.fail(f"Neo4j is required (GQA_REQUIRE_NEO4J=1) but: {error}")
        pytest.skip(f"no Neo4j server: {error}")
    return settings


@pytest.fixture(scope="session")
def neo4j_driver(neo4j_settings):
    from gretriever_neo4j.store.graph_store import open_driver

    driver = open_driver(neo4j_settings)
    yield driver
    driver.close()


@pytest.fixture(scope="session")
def embedder():
    from gretriever_neo4j.embedding.embedder import Embedder

    return Embedder()


@pytest.fixture()
def store(neo4j_driver, neo4j_settings, embedder):
    """A store whose schema matches the default embedder; removes what the test wrote under `store.test_prefix`."""
    from gretriever_neo4j.store.graph_store import GraphStore

    graph_store = GraphStore(neo4j_driver, neo4j_settings.database)
    graph_store.ensure_schema(embedder.name, embedder.dim)
    graph_store.test_prefix = f"t{uuid.uuid4().hex[:8]}"
    yield graph_store
    prefix = graph_store.test_prefix
    neo4j_driver.execute_query(
        "MATCH (n:Node) WHERE n.graph STARTS WITH $p OR n.dataset STARTS WITH $p DETACH DELETE n", p=prefix)
    neo4j_driver.execute_query(
        "MATCH (x) WHERE (x:Graph OR x:Question OR x:Retrieval OR x:Relation) AND "
        "(x.id STARTS WITH $p OR x.dataset STARTS WITH $p OR x.graph STARTS WITH $p) DETACH DELETE x", p=prefix)


_NEO4J_FIXTURES = {"neo4j_settings", "neo4j_driver", "store"}


def pytest_collection_modifyitems(config, items):
    """A test that uses the server (through any fixture that needs it) is marked `neo4j`, so
    `-m "not neo4j and not slow"` selects the unit tier without anyone remembering a mark."""
    for item in items:
        if _NEO4J_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.neo4j)
