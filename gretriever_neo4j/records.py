"""What loaders produce and the store consumes: plain records, no database, no models.

Knowledge-graph datasets (WebQSP, MetaQA, triples) emit many `GraphRecord`s with one `graph_id`; they merge
into one stored graph. Per-sample datasets (ExplaGraphs, SceneGraphs, user CSV graphs) emit one record per
sample, each with its own `graph_id`, and every node and edge carries that id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

GraphKind = Literal["kg", "per-sample"]

# The columns of a user's questions file (`loaders.questions`), read by `gqa ingest questions` (all of them) and
# `gqa ask --questions` (the question, and the answers where given): the fields of the `QuestionRecord` below.
QUESTION_COLUMNS = ("question", "answers", "topic_entities", "split", "id")
QUESTION_REQUIRED = ("question", "answers")
QUESTION_COLUMN_ALIASES = {"answer": "answers", "q_entity": "topic_entities", "topics": "topic_entities",
                           "topic": "topic_entities", "topic_entity": "topic_entities", "qid": "id"}
MAX_QUESTION_CHARS = 2000


def question_column(name: str) -> str:
    """The canonical name of a questions-file header field (case, spaces and aliases folded)."""
    name = name.strip().lower()
    return QUESTION_COLUMN_ALIASES.get(name, name)


@dataclass(frozen=True)
class Node:
    key: str  # unique within its graph (entity name in a KG, local node id in a per-sample graph)
    text: str  # what is embedded and shown to the LLM


@dataclass(frozen=True)
class Edge:
    src: str  # Node.key
    text: str  # relation text
    dst: str  # Node.key


@dataclass
class GraphRecord:
    graph_id: str
    dataset: str
    kind: GraphKind
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    source: str | None = None  # file the record came from, for error messages
    line: int | None = None


@dataclass
class QuestionRecord:
    qid: str  # unique within the dataset
    dataset: str
    text: str
    answers: list[str]  # gold answers; for classification datasets the label ("support"/"counter")
    split: str  # train / val / test
    graph_id: str  # the stored graph this question is asked over
    topic_entities: list[str] = field(default_factory=list)  # Node.keys named by the question, when known
    source: str | None = None
    line: int | None = None


Record = GraphRecord | QuestionRecord
