"""A small movie knowledge graph with templated questions, for reader tests without a database."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from gretriever_neo4j.reader import ZeroShotReader
from gretriever_neo4j.reader.paths import SubgraphView
from gretriever_neo4j.retrieval.kg import KnowledgeGraph
from gretriever_neo4j.retrieval.textualize import textualize

PEOPLE = ["Ada Stone", "Ben Frost", "Cara Lee", "Dan Moss", "Eve Park", "Finn Hale", "Gia Rossi", "Hugo Lind",
          "Ivy Chen", "Jon Reyes", "Kim Novak", "Leo Grant"]
GENRES = ["Drama", "Comedy", "Horror", "Western"]
YEARS = [str(y) for y in range(1990, 2002)]
TITLES = ["Silver Harbor", "Night Orchard", "Paper Kingdom", "Glass River", "Iron Meadow", "Velvet Storm",
          "Copper Sky", "Hidden Lantern", "Broken Compass", "Quiet Thunder", "Golden Maze", "Lost Signal",
          "Frozen Garden", "Scarlet Bridge", "Distant Echo", "Wild Current"]


def toy_triples() -> list[tuple[str, str, str]]:
    rng = np.random.default_rng(7)
    triples = []
    for i, title in enumerate(TITLES):
        triples.append((title, "directed_by", PEOPLE[i % len(PEOPLE)]))
        for actor in rng.choice(len(PEOPLE), size=2, replace=False).tolist():
            triples.append((title, "starred_actors", PEOPLE[actor]))
        triples.append((title, "release_year", YEARS[i % len(YEARS)]))
        triples.append((title, "has_genre", GENRES[i % len(GENRES)]))
    return triples


MOVIE_TEMPLATES = {  # question template -> relation path (text, forward?) from the topic to the answers
    "who directed {}": [("directed_by", True)],
    "when was {} released": [("release_year", True)],
    "what genre is {}": [("has_genre", True)],
    "who acted in {}": [("starred_actors", True)],
}
PERSON_TEMPLATES = {
    "which movies did {} direct": [("directed_by", False)],
    "what years were the movies starring {} released": [("starred_actors", False), ("release_year", True)],
    "who directed the films {} acted in": [("starred_actors", False), ("directed_by", True)],
}


def answers_for(kg: KnowledgeGraph, topic: str, path) -> list[str]:
    frontier = {topic}
    for relation, forward in path:
        reached = set()
        for h, r, t in zip(kg.head.tolist(), kg.relation.tolist(), kg.tail.tolist()):
            if kg.relation_texts[r] != relation:
                continue
            if forward and kg.node_keys[h] in frontier:
                reached.add(kg.node_keys[t])
            if not forward and kg.node_keys[t] in frontier:
                reached.add(kg.node_keys[h])
        frontier = reached
    return sorted(frontier - {topic})


def toy_kg(embedder) -> KnowledgeGraph:
    kg = KnowledgeGraph.from_triples(toy_triples())
    return kg.embedded(embedder.embed)


def whole_graph_result(kg: KnowledgeGraph):
    """Something shaped like a RetrievalResult holding the whole KG (what `SubgraphView.from_result` reads)."""
    candidate = kg.to_whole_candidate_graph()
    sub = textualize(candidate, np.arange(candidate.num_nodes), np.arange(candidate.num_edges))
    return SimpleNamespace(candidate=candidate, subgraph=sub, seed_keys=[])


def questions(kg: KnowledgeGraph, movies, people) -> list[tuple[str, str, list[str]]]:
    """(question, topic, answers) for every template and topic; questions without an answer are left out."""
    out = [(template.format(topic), topic, answers_for(kg, topic, path))
           for topics, templates in ((movies, MOVIE_TEMPLATES), (people, PERSON_TEMPLATES))
           for topic in topics for template, path in templates.items()]
    return [q for q in out if q[2]]


def view_of(triples, embedder):
    """A subgraph of (head, relation, tail) triples whose node texts are their keys, embedded by `embedder`."""
    nodes = list(dict.fromkeys(x for h, _, t in triples for x in (h, t)))
    relations = list(dict.fromkeys(r for _, r, _ in triples))
    return SubgraphView(node_keys=nodes, node_texts=nodes, node_vectors=embedder.embed(nodes),
                        src=np.asarray([nodes.index(h) for h, _, _ in triples]),
                        dst=np.asarray([nodes.index(t) for _, _, t in triples]),
                        relation=np.asarray([relations.index(r) for _, r, _ in triples]),
                        relation_texts=relations, relation_vectors=embedder.embed(relations))


def answers(view, embedder, question: str, masked: str, anchor: int = 0) -> list[str]:
    """The zero-shot reader's answers from node `anchor`, in its order (`masked`: the question with X for it)."""
    reading = ZeroShotReader(embedder.embed).read(question, view, [anchor], embedder.embed([masked])[0],
                                                  embedder.embed([question])[0])
    return [view.node_texts[n] for n in reading.answers]
