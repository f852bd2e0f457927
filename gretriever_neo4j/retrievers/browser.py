"""Where a person looks at a retrieval: the Cypher that shows exactly its subgraph, and a Neo4j Browser link that
opens with that statement in the editor."""

from __future__ import annotations

import json
import urllib.parse

from gretriever_neo4j import cypher
from gretriever_neo4j.errors import InputError


def browser_statement(retrieval_id: str) -> str:
    """The statement that shows exactly one retrieval's subgraph; the id is ours (hex), written as a literal
    so that it can be pasted into Browser as it is."""
    if not retrieval_id.replace("-", "").isalnum():
        raise InputError(f"not a retrieval id: {retrieval_id!r}", field="retrieval id")
    return cypher.load("retrieval_subgraph").text.replace("$id", json.dumps(retrieval_id))


def browser_link(browser_url: str, statement: str) -> str:
    """Neo4j Browser opens with the statement in its editor (`?cmd=edit&arg=…`)."""
    return f"{browser_url.rstrip('/')}/?cmd=edit&arg={urllib.parse.quote(statement)}"
