"""A small movie knowledge graph as loader records (films, their directors and release years), for tests that
ingest through the real store. Film i is directed by director i mod `directors` and released in 1990 + i mod 7."""

from __future__ import annotations

from gretriever_neo4j.records import Edge, GraphRecord, Node


def director(i: int, directors: int) -> str:
    return f"Director {i % directors}"


def year(i: int) -> str:
    return str(1990 + i % 7)


def film_titles(movies: int) -> list[str]:
    return [f"Film {chr(65 + i // 10)}{i % 10}" for i in range(movies)]


def movie_graph(prefix: str, movies: int, directors: int) -> GraphRecord:
    """One KG record named `prefix` (graph and dataset)."""
    titles = film_titles(movies)
    edges = [Edge(m, "directed_by", director(i, directors)) for i, m in enumerate(titles)]
    edges += [Edge(m, "release_year", year(i)) for i, m in enumerate(titles)]
    people = [f"Director {i}" for i in range(directors)]
    nodes = [Node(n, n) for n in people + titles + [str(1990 + y) for y in range(7)]]
    return GraphRecord(graph_id=prefix, dataset=prefix, kind="kg", nodes=nodes, edges=edges)
