"""A stored graph with a recorded, answered retrieval: what feedback tests give feedback on (tests/store,
tests/ingest, tests/cli). The graph is `movie_kg.movie_graph` (films, their directors and years); the retrieval
asked who directed Film A1 and was shown the wrong answer, Director 2 (Director 1 is right)."""

from __future__ import annotations

import uuid

from gretriever_neo4j.ingest.graphs import ingest

from movie_kg import movie_graph

QUESTION = "who directed Film A1"
SHOWN = "Director 2"
RIGHT = "Director 1"


def stored_graph(store, embedder, graph: str, movies: int = 12, directors: int = 4) -> str:
    ingest([movie_graph(graph, movies, directors)], store, embedder.embed, dataset=graph)
    return graph


def answered_retrieval(store, graph: str, *, question: str = QUESTION, shown: tuple[str, ...] = (SHOWN,),
                       anchors: tuple[str, ...] = ("Film A1",)) -> str:
    """Records a retrieval over `graph` and the answer it showed, as `gqa ask` does; returns its id."""
    retrieval_id = f"r-{uuid.uuid4().hex[:12]}"
    store.record_retrieval(id=retrieval_id, question=question, graph=graph, params="{}", node_refs=[], rel_refs=[],
                           textualized="", timings="{}")
    assert store.record_answer(id=retrieval_id, answer_keys=list(shown), answer_text="|".join(shown),
                               anchor_keys=list(anchors))
    return retrieval_id
