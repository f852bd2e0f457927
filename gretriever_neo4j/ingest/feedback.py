"""Feedback on answers (`gqa feedback`, `POST /api/feedback`): what a person says about an answer becomes a train
question of the graph (`store.feedback`), so that the next `gqa train --graph G` learns from the people who ask.

A feedback names a recorded retrieval, a verdict and optionally an answer (a node key, or a name that one node of
the graph carries) and the answers shown it judges (`shown`, node keys; default: every answer shown):

* right: the answer named, else the answers judged, are answers of the question;
* wrong: the answers judged are not (kept as `not_answers`); the answer named, if any, is. A wrong verdict naming no
  answer keeps a negative: the question with what its answer is not, and no gold answer.

One question per retrieval: later feedback on it updates the same question (answers and not-answers merged, the
verdict's vote counted). The question goes to the dataset of the graph's stored questions, so that `gqa train
--graph G`, which reads one dataset's questions, finds it: the graph's own name (where `gqa ingest questions` puts
a user's questions) unless the graph holds only questions of another dataset (a loader's), then that one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gretriever_neo4j.errors import InputError, NotFoundError, unknown_graph
from gretriever_neo4j.retrieval.linking_backends import escape_lucene, phrase_query
from gretriever_neo4j.retrieval.naming import analyzer_tokens
from gretriever_neo4j.store.feedback import (
    VERDICTS,
    AnsweredRetrieval,
    AwaitingAnswer,
    FeedbackQuestion,
    Vote,
    answered_retrieval,
    awaiting_feedback,
    drop_feedback,
    feedback_questions,
    store_vote,
)

__all__ = ["NodeName", "answers_awaiting", "complete_names", "export_tsv", "feedback_dataset", "give_feedback",
           "list_feedback", "remove_feedback", "resolve_answer", "what_feedback_taught"]

_RETRIEVAL_ID = re.compile(r"[A-Za-z0-9-]{1,64}")
MAX_NAME_CHARS = 1000
_NAME_CANDIDATES = 50  # fulltext hits read to find the nodes that carry a name exactly


@dataclass(frozen=True)
class NodeName:
    key: str
    text: str


def give_feedback(store, retrieval_id: str, verdict: str, *, answer: str | None = None,
                  shown: Sequence[str] | None = None, given_by: str | None = None) -> FeedbackQuestion:
    """Stores one feedback (module docstring) and returns the question as it now stands. Bad input raises
    `InputError` naming its field (retrieval_id, verdict, answer, shown); an unknown retrieval or graph
    `NotFoundError`; a graph being dropped `ConflictError`. Nothing is written unless all of it is."""
    if not isinstance(retrieval_id, str) or not _RETRIEVAL_ID.fullmatch(retrieval_id):
        raise InputError(f"not a retrieval id: {retrieval_id!r} (the id `gqa ask` printed, r-…)",
                         field="retrieval_id")
    if verdict not in VERDICTS:
        raise InputError(f"the verdict is {' or '.join(VERDICTS)}, not {verdict!r}", field="verdict")
    retrieval = answered_retrieval(store, retrieval_id)
    if retrieval is None:
        raise NotFoundError(f"no retrieval {retrieval_id!r} is recorded")
    named = resolve_answer(store, retrieval.graph, answer).key if answer is not None else None
    judged = _judged(retrieval, shown)
    if verdict == "right":
        add = (named,) if named else judged
        if not add:
            raise InputError("the retrieval has no recorded answer to confirm: name the answer", field="answer")
        reject: tuple[str, ...] = ()
    else:
        add = (named,) if named else ()
        reject = tuple(key for key in judged if key != named)
    dataset = retrieval.feedback_dataset or feedback_dataset(store, retrieval.graph)
    return store_vote(store, Vote(retrieval=retrieval, verdict=verdict, add=add, reject=reject, dataset=dataset,
                                  given_by=given_by))


def _judged(retrieval: AnsweredRetrieval, shown: Sequence[str] | None) -> tuple[str, ...]:
    """The answers shown that the verdict is about: `shown` (each one of them), else all."""
    if shown is None:
        return retrieval.answer_keys
    unknown = [key for key in shown if key not in retrieval.answer_keys]
    if unknown:
        listed = ", ".join(repr(k) for k in retrieval.answer_keys[:10]) or "none was recorded"
        raise InputError(f"{unknown[0]!r} is not an answer retrieval {retrieval.id} showed ({listed})",
                         field="shown")
    return tuple(dict.fromkeys(shown))


def feedback_dataset(store, graph: str) -> str:
    """Where a retrieval's first feedback puts its question (module docstring)."""
    held = [row["dataset"] for row in store.question_datasets(graph)]
    return graph if not held or graph in held else held[0]


def resolve_answer(store, graph: str, answer: str) -> NodeName:
    """The node `answer` names in `graph`: the node with that key, else the one node whose text is `answer` (exactly,
    else ignoring case and spacing). `InputError` (field 'answer') when no node or several nodes carry it."""
    if not isinstance(answer, str) or not answer.strip():
        raise InputError("the answer is empty: give a node's key or name", field="answer")
    if len(answer) > MAX_NAME_CHARS:
        raise InputError(f"the answer has {len(answer)} characters (at most {MAX_NAME_CHARS})", field="answer")
    keyed = store.read("feedback_nodes", graph=graph, keys=list(dict.fromkeys((answer, answer.strip()))))
    if keyed:
        return NodeName(key=keyed[0]["key"], text=keyed[0]["text"])
    name = answer.strip()
    try:
        hits = store.fulltext_nodes(phrase_query(name), graph, _NAME_CANDIDATES)
    except InputError:
        hits = []
    exact = [hit for hit in hits if hit["text"] == name]
    loose = [hit for hit in hits if _loose(hit["text"]) == _loose(name)]
    for found in (exact, loose):
        if len(found) == 1:
            return NodeName(key=found[0]["key"], text=found[0]["text"])
        if len(found) > 1:
            keys = ", ".join(repr(hit["key"]) for hit in found[:5])
            raise InputError(f"{len(found)} nodes of graph {graph!r} are named {name!r} ({keys}): give the key",
                             field="answer")
    raise InputError(f"no node of graph {graph!r} has the key or name {name!r}", field="answer")


def _loose(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def complete_names(store, graph: str, text: str, limit: int = 10) -> list[NodeName]:
    """Nodes of `graph` whose name holds every word of `text`, the last one as a prefix (what a person is typing),
    best first: the name-completion of "the answer is …"."""
    if store.graph_info(graph) is None:
        raise unknown_graph(graph)
    tokens = analyzer_tokens(text or "")
    if not tokens or limit <= 0:
        return []
    query = " ".join([*(f"+{escape_lucene(t)}" for t in tokens[:-1]), f"+{escape_lucene(tokens[-1])}*"])
    hits = store.fulltext_nodes(query, graph, max(int(limit) * 2, 16))
    hits.sort(key=lambda hit: (-round(hit["score"], 6), len(hit["text"] or ""), hit["text"] or "", hit["key"]))
    return [NodeName(key=hit["key"], text=hit["text"]) for hit in hits[:limit]]


def list_feedback(store, graph: str) -> list[FeedbackQuestion]:
    """The questions feedback made over `graph` (`NotFoundError` for an unknown graph)."""
    if store.graph_info(graph) is None:
        raise unknown_graph(graph)
    return feedback_questions(store, graph)


MAX_AWAITING = 100  # answers listed at most per request (`answers_awaiting`)


def answers_awaiting(store, graph: str, limit: int = 20) -> list[AwaitingAnswer]:
    """The answers over `graph` that nobody has judged yet, the least confident first (`store.feedback.
    awaiting_feedback`): what the page's "Help it learn" view offers. `NotFoundError` for an unknown graph,
    `InputError` (field 'limit') for a limit outside 1..`MAX_AWAITING`."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_AWAITING:
        raise InputError(f"the limit is a whole number from 1 to {MAX_AWAITING}, not {limit!r}", field="limit")
    if store.graph_info(graph) is None:
        raise unknown_graph(graph)
    return awaiting_feedback(store, graph, limit)


def what_feedback_taught(graph: str) -> dict | None:
    """What the last `gqa train --graph G` learned from the graph's questions, feedback's among them, as its models'
    manifest says (`TrainedModels.fewshot`: questions, feedback_questions, before, after, measured_on, adopted,
    trained; any may be missing): those fields, `trained` (when) and `text`, a sentence for people. None where
    nothing is trained for the graph (or its manifest cannot be read)."""
    from gretriever_neo4j.artifacts.registry import load_trained
    from gretriever_neo4j.errors import ConfigError

    try:
        models = load_trained(graph)
    except ConfigError:
        return None
    if models is None:
        return None
    fewshot = models.fewshot
    taught = {key: fewshot[key] for key in ("questions", "feedback_questions", "before", "after", "measured_on",
                                            "adopted") if fewshot.get(key) is not None}
    taught["trained"] = fewshot.get("trained") or models.created or None
    taught["text"] = _taught_text(taught, measured=bool(fewshot))
    return taught


def _percent(value) -> str | None:
    return f"{float(value):.0%}" if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _taught_text(taught: dict, *, measured: bool) -> str:
    if not measured:
        return "Its models were trained before training measured what questions and feedback teach."
    questions, given = taught.get("questions"), taught.get("feedback_questions")
    if questions is not None and given is not None:
        counts = f"{questions} questions, {given} of them from feedback"
    elif questions is not None:
        counts = f"{questions} questions"
    elif given is not None:
        counts = f"{given} questions from feedback"
    else:
        counts = ""
    text = "After the last gqa train" + (f" ({counts})" if counts else "")
    before, after = _percent(taught.get("before")), _percent(taught.get("after"))
    where = taught.get("measured_on") or "on its own questions"
    if before and after:
        text += f": {before} → {after} right ({where})"
    elif after or before:
        text += f": {after or before} right ({where})"
    if taught.get("adopted") is True:
        text += "; answers use what it learned"
    elif taught.get("adopted") is False:
        text += "; not adopted: answers do not use it"
    return text + "."


def remove_feedback(store, graph: str) -> int:
    """Deletes the questions feedback made over `graph`, and no other; returns how many."""
    if store.graph_info(graph) is None:
        raise unknown_graph(graph)
    return drop_feedback(store, graph)


@dataclass(frozen=True)
class Export:
    text: str  # the TSV
    written: int
    negatives: int  # left out: no answer (a questions file needs one)
    unwritable: int  # left out: an answer or topic key holds '|', a tab or a line break, which the TSV cannot carry


def export_tsv(questions: Iterable[FeedbackQuestion]) -> Export:
    """The questions as the TSV `gqa ingest questions` reads: a header `id, question, answers, topic_entities,
    split`, answers and topics '|'-separated node keys, the id the retrieval's (so a re-ingest into the same graph
    updates the same questions)."""
    lines = ["id\tquestion\tanswers\ttopic_entities\tsplit"]
    written = negatives = unwritable = 0
    for question in questions:
        if question.negative:
            negatives += 1
            continue
        keys = [*question.answers, *question.topic_entities, question.qid, question.split]
        if any(ch in key for key in keys for ch in "|\t\r\n"):
            unwritable += 1
            continue
        lines.append("\t".join([question.qid, " ".join(question.text.split()), "|".join(question.answers),
                                "|".join(question.topic_entities), question.split]))
        written += 1
    return Export(text="\n".join(lines) + "\n", written=written, negatives=negatives, unwritable=unwritable)
