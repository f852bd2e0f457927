"""Where entity linking looks names up: `StoreLinking` (Neo4j's `node_text` fulltext and `node_embedding` vector
indexes, through `GraphStore`) and `InMemoryLinking` (a `KnowledgeGraph`, for benchmarks and tests without a
database, scoring like Lucene's BM25), behind one `LinkingBackend` protocol; and the Lucene phrase queries a mention
is looked up with. `retrieval.linking` decides what the hits mean."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.retrieval.naming import analyzer_tokens, relation_name_words
from gretriever_neo4j.retrieval.seeds import rank_top

_SPACES = re.compile(r"\s+")

# Lucene classic query syntax: characters with a meaning, escaped with a backslash; `&&`/`||` are escaped as
# single characters. The operator words are only operators in upper case; the index's analyzer lower-cases
# every term, so writing them in lower case changes nothing about what matches.
_LUCENE_SPECIAL = set('+-&|!(){}[]^"~*?:\\/')
_LUCENE_OPERATORS = re.compile(r"\b(AND|OR|NOT)\b")


def escape_lucene(text: str) -> str:
    """`text` as literal Lucene query text: every special character backslash-escaped, AND/OR/NOT lower-cased."""
    escaped = "".join("\\" + ch if ch in _LUCENE_SPECIAL else ch for ch in text)
    return _LUCENE_OPERATORS.sub(lambda match: match.group(0).lower(), escaped)


def phrase_query(text: str, *, fuzzy: bool = False, min_fuzzy_length: int = 4) -> str:
    """A Lucene query for the mention `text`: the exact phrase, or (fuzzy) the phrase boosted, OR all of its
    words each within one edit. Raises InputError for text without a letter or digit (Lucene would reject an
    empty phrase)."""
    tokens = analyzer_tokens(text)
    if not tokens:
        raise InputError(f"no word to search for in {text!r}", field="mention")
    phrase = '"' + escape_lucene(_SPACES.sub(" ", text).strip()) + '"'
    if not fuzzy:
        return phrase
    words = [escape_lucene(t) + ("~1" if len(t) >= min_fuzzy_length else "") for t in tokens]
    return f"({phrase}^2 OR ({' AND '.join(words)}))"


@dataclass(frozen=True)
class TextHit:
    key: str
    text: str
    score: float
    degree: int = 0  # the node's edges; 0 where the backend does not say


class LinkingBackend(Protocol):
    def mention_hits(self, mentions: Sequence[str], graph: str | None, limit: int) -> list[list[TextHit]]:
        """For each mention, up to `limit` nodes whose name contains it as a phrase, best first."""

    def vector_hits(self, vector: np.ndarray, graph: str | None, k: int) -> list[TextHit]:
        """The k nodes most similar to the vector, best first (score: the cosine)."""

    # A backend may also offer `relation_words(graph) -> frozenset[str]` (`relation_name_words` of the graph's
    # relation texts): exact matches whose mention names a relation are then ranked last (module docstring).


class StoreLinking:
    """Linking through Neo4j: the `node_text` fulltext index and the `node_embedding` vector index.
    `relation_words`: `relation_name_words` of the graph's relation texts when the caller has them (else the
    texts are read once, when first needed)."""

    def __init__(self, store, *, fuzzy: bool = False, relation_words: frozenset[str] | None = None):
        self.store = store
        self.fuzzy = fuzzy
        self._relation_words: dict[str | None, frozenset[str]] = {}
        self._given = relation_words

    def mention_hits(self, mentions: Sequence[str], graph: str | None, limit: int) -> list[list[TextHit]]:
        queries = [phrase_query(m, fuzzy=self.fuzzy) for m in mentions]
        rows = self.store.fulltext_nodes_many(queries, graph, limit)
        return [[TextHit(r["key"], r["text"], float(r["score"]), int(r.get("degree") or 0)) for r in per_query]
                for per_query in rows]

    def relation_words(self, graph: str | None) -> frozenset[str]:
        if self._given is not None:
            return self._given
        if graph is None:
            return frozenset()
        if graph not in self._relation_words:
            self._relation_words[graph] = relation_name_words(self.store.kg_relation_texts(graph))
        return self._relation_words[graph]

    def vector_hits(self, vector: np.ndarray, graph: str | None, k: int) -> list[TextHit]:
        return [TextHit(row["key"], row.get("text") or "", float(row["score"]), int(row.get("degree") or 0))
                for row in self.store.seed_nodes(vector, k, graph)]


class InMemoryLinking:
    """Linking over a `KnowledgeGraph` with node embeddings: phrase containment over analyzer tokens, scored
    with Lucene's BM25 (k1 = 1.2, b = 0.75; idf summed over the phrase's terms), then key; exact cosine for
    vector hits."""

    K1, B = 1.2, 0.75

    def __init__(self, kg):
        self.kg = kg
        self._tokens = [analyzer_tokens(text) for text in kg.node_texts]
        postings: dict[str, list[int]] = defaultdict(list)
        for node, tokens in enumerate(self._tokens):
            for token in set(tokens):
                postings[token].append(node)
        self._postings = {token: np.asarray(nodes, dtype=np.int64) for token, nodes in postings.items()}
        self._average_length = max(float(np.mean([len(t) for t in self._tokens])) if self._tokens else 1.0, 1.0)
        self._unit_rows: np.ndarray | None = None
        self._relation_words: frozenset[str] | None = None

    def _idf(self, token: str) -> float:
        df = len(self._postings.get(token, ()))
        return float(np.log(1.0 + (len(self._tokens) - df + 0.5) / (df + 0.5)))

    def _phrase_hits(self, tokens: tuple[str, ...]) -> list[tuple[int, float]]:
        lists = [self._postings.get(t) for t in tokens]
        if any(p is None for p in lists):
            return []
        lists.sort(key=len)
        nodes = lists[0]
        for other in lists[1:]:
            nodes = np.intersect1d(nodes, other, assume_unique=True)
            if nodes.size == 0:
                return []
        n, idf = len(tokens), sum(self._idf(t) for t in tokens)
        hits = []
        for node in nodes.tolist():
            name = self._tokens[node]
            freq = sum(1 for i in range(len(name) - n + 1) if name[i:i + n] == tokens)
            if freq:
                norm = self.K1 * (1 - self.B + self.B * len(name) / self._average_length)
                hits.append((node, idf * freq * (self.K1 + 1) / (freq + norm)))
        return hits

    def mention_hits(self, mentions: Sequence[str], graph: str | None, limit: int) -> list[list[TextHit]]:
        out = []
        keys, texts = self.kg.node_keys, self.kg.node_texts
        degree = getattr(self.kg, "degree", None)
        for mention in mentions:
            hits = sorted(self._phrase_hits(analyzer_tokens(mention)),
                          key=lambda hit: (-round(hit[1], 6), keys[hit[0]]))
            out.append([TextHit(keys[node], texts[node], score, 0 if degree is None else int(degree[node]))
                        for node, score in hits[:limit]])
        return out

    def relation_words(self, graph: str | None) -> frozenset[str]:
        if self._relation_words is None:
            self._relation_words = relation_name_words(getattr(self.kg, "relation_texts", ()))
        return self._relation_words

    def vector_hits(self, vector: np.ndarray, graph: str | None, k: int) -> list[TextHit]:
        """Exact top-k by cosine. The vector index's job, so one matrix product against rows normalised once
        (`cosine_to_query` deduplicates rows for exact ties, which costs ~70 ms on 43k nodes per call)."""
        if self._unit_rows is None:
            rows = np.asarray(self.kg.node_embeddings, dtype=np.float32)
            self._unit_rows = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-8)
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        scores = self._unit_rows @ (query / max(float(np.linalg.norm(query)), 1e-8))
        degree = getattr(self.kg, "degree", None)
        return [TextHit(self.kg.node_keys[i], self.kg.node_texts[i], float(scores[i]),
                        0 if degree is None else int(degree[i]))
                for i in rank_top(scores, self.kg.node_keys, k).tolist()]
