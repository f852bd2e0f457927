"""`gqa ingest questions`: a user's questions over any stored graph, stored like the dataset loaders' questions.

1. the whole file is parsed first (`loaders.questions`): a bad row fails the run with its file and line before
   anything is written (or, with `skip_bad`, is collected and left out);
2. questions without topic entities are **linked** to the graph with the hybrid linking of the learned retriever
   (`retrieval.linking.link_seeds` over Neo4j's fulltext and vector indexes): the exact full-name matches of
   the question's n-grams, else the best fused (fulltext + vector) hit, as the retriever seeds at answer time;
3. the report says how many questions were linked (by name, by similarity, not at all), how many given topic
   entities and how many answers are nodes of the graph;
4. questions are upserted on (dataset, qid) with dataset = the graph's name, in batches that are transactions:
   a second run writes the same rows again and changes nothing. `sync` deletes the graph's questions of that
   dataset that the file no longer holds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.progress import OnProgress, notify
from gretriever_neo4j.records import QuestionRecord


@dataclass
class QuestionsReport:
    graph: str
    dataset: str
    questions: int = 0
    splits: dict[str, int] = field(default_factory=dict)
    topics_given: int = 0  # questions whose file row named topic entities
    given_topics_not_nodes: int = 0  # such topic entities that are not node keys of the graph
    linked_by_name: int = 0  # questions linked here by an exact full-name match
    linked_by_similarity: int = 0  # ...by the best fulltext + vector hit only
    not_linked: int = 0
    questions_with_answer_node: int = 0  # at least one gold answer is a node key of the graph
    answers: int = 0
    answers_as_nodes: int = 0
    written: int = 0
    deleted: int = 0  # sync: questions the file no longer holds
    bad_rows: list[InputError] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        data = {k: v for k, v in self.__dict__.items() if k != "bad_rows"}
        data["bad_rows"] = len(self.bad_rows)
        return data


def read_questions(source, graph: str, *, limit: int | None = None, skip_bad: bool = False,
                   split: str | None = None, seed: int | None = None) -> tuple[list[QuestionRecord], list[InputError]]:
    """Every record of the file, validated; bad rows raise unless `skip_bad` collects them."""
    from gretriever_neo4j.loaders import questions as loader

    bad: list[InputError] = []
    records = list(loader.read(source, limit=limit, on_bad_row=bad.append if skip_bad else None, graph=graph,
                               split=split, seed=seed))
    return records, bad


def ingest_questions(store, embedder, graph: str, source, *, limit: int | None = None, skip_bad: bool = False,
                     split: str | None = None, seed: int | None = None, sync: bool = False, link: bool = True,
                     on_progress: OnProgress | None = None) -> QuestionsReport:
    started = time.perf_counter()
    if sync and limit is not None:
        raise ConfigError("--sync deletes the questions the file does not hold: it cannot be combined with --limit")
    if not isinstance(graph, str) or not graph.strip():
        raise ConfigError("ingest questions needs --graph NAME: the stored graph they are asked over")
    graph = graph.strip()
    if store.graph_info(graph) is None:
        raise ConfigError(f"no stored graph is called {graph!r} (see `gqa stats`): ingest the graph first, "
                          f"e.g. `gqa ingest triples --source kb.tsv --graph {graph}`")
    records, bad = read_questions(source, graph, limit=limit, skip_bad=skip_bad, split=split, seed=seed)
    report = QuestionsReport(graph=graph, dataset=graph, questions=len(records), bad_rows=bad)
    store.ensure_schema(embedder.name, embedder.dim)

    given = [r for r in records if r.topic_entities]
    report.topics_given = len(given)
    known = _existing_keys(store, graph, [t for r in given for t in r.topic_entities])
    report.given_topics_not_nodes = sum(t not in known for r in given for t in r.topic_entities)

    topics = {id(r): list(r.topic_entities) for r in records}
    missing = [r for r in records if not r.topic_entities]
    if missing and link:
        for record, (linked, by_name) in zip(missing, _link(store, embedder, graph, missing, on_progress)):
            topics[id(record)] = linked
            if not linked:
                report.not_linked += 1
            elif by_name:
                report.linked_by_name += 1
            else:
                report.linked_by_similarity += 1
    elif missing:
        report.not_linked = len(missing)

    answer_nodes = _existing_keys(store, graph, [a for r in records for a in r.answers])
    for record in records:
        report.answers += len(record.answers)
        hits = sum(a in answer_nodes for a in record.answers)
        report.answers_as_nodes += hits
        report.questions_with_answer_node += bool(hits)
        report.splits[record.split] = report.splits.get(record.split, 0) + 1

    rows = [{"dataset": r.dataset, "qid": r.qid, "text": r.text, "answers": list(r.answers), "split": r.split,
             "graph": r.graph_id, "topic_entities": topics[id(r)]} for r in records]
    report.written = store.write_questions(rows)
    if sync:
        report.deleted = store.delete_questions_except(graph, graph, {r.qid for r in records})
    report.seconds = time.perf_counter() - started
    return report


def _existing_keys(store, graph: str, keys: list[str], batch: int = 5000) -> set[str]:
    distinct = list(dict.fromkeys(keys))
    found: set[str] = set()
    for start in range(0, len(distinct), batch):
        found.update(store.node_refs(graph, distinct[start:start + batch]))
    return found


def _link(store, embedder, graph: str, records: list[QuestionRecord],
          on_progress: OnProgress | None):
    """(topic keys, linked by an exact name match?) per record: the seeds the learned retriever would take."""
    from gretriever_neo4j.retrieval.learned import RetrieverConfig
    from gretriever_neo4j.retrieval.linking import StoreLinking, link_seeds, strip_topic_markers

    config = RetrieverConfig()

    texts = [strip_topic_markers(r.text) for r in records]
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    backend = StoreLinking(store)
    out = []
    for i, (text, vector) in enumerate(zip(texts, vectors)):
        result = link_seeds(text, vector, backend, graph, k=max(config.seed_fallback, 1), embed=embedder.embed)
        linked = result.preferred(config.seed_fallback)[:config.max_seeds]
        out.append((linked, bool(result.exact)))
        if on_progress and ((i + 1) % 100 == 0 or i + 1 == len(texts)):
            notify(on_progress, "link", i + 1, len(texts))
    return out
