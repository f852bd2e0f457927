"""Automated hallucination check (the paper's Table 5, done by machine): are the nodes and edges an answer
cites really in the subgraph the model was shown?

The subgraph is its textualization, the CSV the LLM reads:

    node_id,node_attr
    0,paris
    1,france

    src,edge_attr,dst
    1,capital,0

Citation format. Prompts that want checkable answers append CITATION_INSTRUCTION, asking the model to end with
one line such as `Evidence: nodes 0, 1; edges 1-0`. Node ids are the CSV's ids; an edge is cited as
`src-dst` (also `src->dst` or `src→dst`) and is valid when the subgraph has an edge between the two nodes in
either direction (models do not reliably keep direction). If several Evidence lines occur, the last one counts.
Ids compare as written, except that integers compare by value ("07" is "7").

Fallback, when the output cites no node or edge id (no Evidence line, or one without ids):
1. Every node whose normalised text occurs in the normalised answer as whole words counts as cited and valid.
2. The answer is split into items at '|' and line breaks (as the metrics split it). An item is supported when,
   after removing every node and edge text it contains (as whole words, longest first), only connective words
   remain (FILLER_WORDS: "and", "of", "is", …, and the non-entity answers yes/no/support/counter/none/unknown).
   So "Paris" and "Lightning rod and Bifocals" are supported by nodes of those names, while "Marseille" or a
   sentence such as "Franklin invented the law of the light" is not: each unsupported item counts as one invalid
   node citation. (`max_mention_words` is accepted for compatibility and ignored: prose is no excuse.)
Normalisation: lower-case, punctuation replaced by spaces, the articles a/an/the dropped, whitespace squeezed.
Fractions are valid / cited, and 1.0 when nothing of that kind was cited (vacuously valid).
"""

from __future__ import annotations

import csv
import io
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ..errors import InputError
from ..language import WORDS

CITATION_INSTRUCTION = ("After your answer, add a last line citing the evidence you used from the graph, by node "
                        "ids and edges (source-target), in exactly this form: Evidence: nodes 3, 7; edges 3-7")
NON_ENTITY_ANSWERS = WORDS.non_entity_answers
FILLER_WORDS = WORDS.filler_words
DEFAULT_MAX_MENTION_WORDS = 5

_EVIDENCE = re.compile(r"evidence\s*:", re.IGNORECASE)
_ID = r"[\w.:]+"
_EDGE = re.compile(rf"({_ID})\s*(?:->|→|-)\s*({_ID})")
_NODES_PART = re.compile(r"\bnodes?\b\s*:?(.*?)(?=\bedges?\b|$)", re.IGNORECASE | re.DOTALL)
_EDGES_PART = re.compile(r"\bedges?\b\s*:?(.*)$", re.IGNORECASE | re.DOTALL)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PARENTHESES = re.compile(r"\([^)]*\)")
_FILLER_IDS = WORDS.filler_ids
_PUNCTUATION_TO_SPACE = str.maketrans({ch: " " for ch in string.punctuation})


@dataclass(frozen=True)
class TextualGraph:
    nodes: dict[str, str]  # node id -> node text
    edges: tuple[tuple[str, str, str], ...]  # (src id, relation text, dst id)

    def has_node(self, node_id: str) -> bool:
        return node_id in self.nodes

    def has_edge_between(self, a: str, b: str) -> bool:
        return any({src, dst} == {a, b} for src, _, dst in self.edges)


@dataclass(frozen=True)
class Citations:
    nodes: tuple[str, ...]
    edges: tuple[tuple[str, str], ...]

    @property
    def empty(self) -> bool:
        return not self.nodes and not self.edges


@dataclass(frozen=True)
class CitationCheck:
    mode: Literal["explicit", "fallback"]
    cited_nodes: tuple[str, ...]  # explicit: cited ids; fallback: ids of nodes whose text the answer contains
    invalid_nodes: tuple[str, ...]  # explicit: cited ids absent from the graph; fallback: unsupported mentions
    cited_edges: tuple[tuple[str, str], ...]
    invalid_edges: tuple[tuple[str, str], ...]

    @property
    def node_citations(self) -> int:
        return len(self.cited_nodes) + (len(self.invalid_nodes) if self.mode == "fallback" else 0)

    @property
    def valid_node_citations(self) -> int:
        return self.node_citations - len(self.invalid_nodes)

    @property
    def nodes_valid_fraction(self) -> float:
        return self.valid_node_citations / self.node_citations if self.node_citations else 1.0

    @property
    def edges_valid_fraction(self) -> float:
        if not self.cited_edges:
            return 1.0
        return (len(self.cited_edges) - len(self.invalid_edges)) / len(self.cited_edges)

    @property
    def all_valid(self) -> bool:
        return not self.invalid_nodes and not self.invalid_edges


def parse_textualized_graph(desc: str) -> TextualGraph:
    """Nodes and edges of a textualized subgraph (see the module docs); "" is the empty graph."""
    reader = csv.reader(io.StringIO(desc))
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str, str]] = []
    section = "start"
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        if section != "edges" and _is_edge_header(row):
            section = "edges"
        elif section == "start":
            if len(row) < 2:
                raise InputError(f"expected a node header such as 'node_id,node_attr', got {row!r}",
                                 field="desc", line=reader.line_num)
            section = "nodes"
        elif section == "nodes":
            if len(row) < 2:
                raise InputError(f"node row needs an id and a text, got {row!r}", field="desc",
                                 line=reader.line_num)
            nodes[canonical_id(row[0])] = ",".join(row[1:])
        else:
            if len(row) < 3:
                raise InputError(f"edge row needs src, relation and dst, got {row!r}", field="desc",
                                 line=reader.line_num)
            edges.append((canonical_id(row[0]), ",".join(row[1:-1]), canonical_id(row[-1])))
    return TextualGraph(nodes=nodes, edges=tuple(edges))


def parse_citations(output: str) -> Citations:
    """Node ids and edges cited on the output's last Evidence line (empty when there is none)."""
    evidence = _evidence_text(output)
    if evidence is None:
        return Citations(nodes=(), edges=())
    evidence = _PARENTHESES.sub(" ", evidence)  # "3 (Paris)": the id is the citation, the text a gloss
    edges_match = _EDGES_PART.search(evidence)
    edge_text = edges_match.group(1) if edges_match else ""
    edges = tuple(dict.fromkeys((canonical_id(a), canonical_id(b)) for a, b in _EDGE.findall(edge_text)))
    edges = tuple((a, b) for a, b in edges if a and b)
    nodes_match = _NODES_PART.search(evidence)
    node_text = nodes_match.group(1) if nodes_match else ""
    node_ids = [canonical_id(tok) for tok in re.findall(_ID, node_text) if tok.lower() not in _FILLER_IDS]
    return Citations(nodes=tuple(dict.fromkeys(n for n in node_ids if n)), edges=edges)


def answer_text(output: str) -> str:
    """The output without its Evidence line(s)."""
    match = _EVIDENCE.search(output)
    return output[:match.start()] if match else output


def check_citations(desc: str | TextualGraph, output: str, *,
                    max_mention_words: int = DEFAULT_MAX_MENTION_WORDS) -> CitationCheck:
    """Check an output's citations against the subgraph it was generated from (rules in the module docs)."""
    graph = desc if isinstance(desc, TextualGraph) else parse_textualized_graph(desc)
    citations = parse_citations(output)
    if not citations.empty:
        return CitationCheck(
            mode="explicit",
            cited_nodes=citations.nodes,
            invalid_nodes=tuple(n for n in citations.nodes if not graph.has_node(n)),
            cited_edges=citations.edges,
            invalid_edges=tuple(e for e in citations.edges if not graph.has_edge_between(*e)),
        )
    return _fallback_check(graph, answer_text(output), max_mention_words)


@dataclass(frozen=True)
class CitationSummary:
    outputs: int
    nodes_valid_fraction: float  # over all node citations (micro average)
    edges_valid_fraction: float
    all_valid_fraction: float  # outputs whose citations are all valid
    fallback_outputs: int  # outputs judged by the fallback rule


def summarize_citations(checks: Iterable[CitationCheck]) -> CitationSummary:
    checks = list(checks)
    node_total = sum(c.node_citations for c in checks)
    edge_total = sum(len(c.cited_edges) for c in checks)
    return CitationSummary(
        outputs=len(checks),
        nodes_valid_fraction=sum(c.valid_node_citations for c in checks) / node_total if node_total else 1.0,
        edges_valid_fraction=(sum(len(c.cited_edges) - len(c.invalid_edges) for c in checks) / edge_total
                              if edge_total else 1.0),
        all_valid_fraction=sum(c.all_valid for c in checks) / len(checks) if checks else 1.0,
        fallback_outputs=sum(c.mode == "fallback" for c in checks),
    )


def canonical_id(raw: str) -> str:
    text = raw.strip().rstrip(".:")  # a sentence's full stop is not part of the id
    return str(int(text)) if text.isdigit() else text


def normalize_text(text: str) -> str:
    text = text.lower().translate(_PUNCTUATION_TO_SPACE)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _fallback_check(graph: TextualGraph, answer: str, max_mention_words: int) -> CitationCheck:
    normalized_answer = normalize_text(answer)
    node_texts = {node_id: normalize_text(text) for node_id, text in graph.nodes.items()}
    found = tuple(node_id for node_id, text in node_texts.items()
                  if text and _contains_words(normalized_answer, text))
    known = sorted({t for t in node_texts.values() if t} | {t for t in (normalize_text(r) for _, r, _ in graph.edges)
                                                              if t}, key=len, reverse=True)
    unsupported = []
    for item in _items(answer):
        if not _supported(item, known) and item not in unsupported:
            unsupported.append(item)
    return CitationCheck(mode="fallback", cited_nodes=found, invalid_nodes=tuple(unsupported), cited_edges=(),
                         invalid_edges=())


def _items(answer: str) -> list[str]:
    return [item for item in (normalize_text(part) for part in re.split(r"[|\n]", answer)) if item]


def _supported(item: str, known_texts: list[str]) -> bool:
    rest = f" {item} "
    for text in known_texts:  # longest first, so "lightning rod" goes before "rod"
        if f" {text} " in rest:
            rest = rest.replace(f" {text} ", " ")
            rest = rest.replace(f" {text} ", " ")  # overlapping repeats
    return all(word in FILLER_WORDS for word in rest.split())


def _contains_words(haystack: str, needle: str) -> bool:
    return bool(needle) and f" {needle} " in f" {haystack} "


def _is_edge_header(row: list[str]) -> bool:
    cells = [cell.strip().lower() for cell in row]
    return len(cells) == 3 and cells[0] == "src" and cells[-1] == "dst"


def _evidence_text(output: str) -> str | None:
    matches = list(_EVIDENCE.finditer(output))
    if not matches:
        return None
    rest = output[matches[-1].end():]
    return rest.split("\n", 1)[0]
