"""Retrieval parameters and their defaults, in one place: the paper's PCST settings per dataset, a whole-graph
search for per-sample graphs, and a user's overrides of single fields."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from gretriever_neo4j.errors import ConfigError, InputError
from gretriever_neo4j.retrieval.pcst import DEFAULTS, PcstParams

PER_SAMPLE_DATASETS = ("explagraphs", "scenegraphs")


@dataclass(frozen=True)
class RetrievalParams:
    seed_k: int = 5  # nodes most similar to the question
    seed_k_edges: int = 5  # edges most similar to the question; both endpoints become seeds
    hops: int = 2
    # Bounds of the candidate graph: tighter bounds lose the answer from many more subgraphs for little less latency.
    fanout: int = 50  # incident edges followed per node and hop
    max_nodes: int = 500
    max_edges: int = 2000
    pcst: PcstParams = field(default_factory=lambda: DEFAULTS["webqsp"])
    whole_graph: bool = False  # per-sample graphs: the candidate set is the whole graph, as in the paper

    def __post_init__(self) -> None:
        for name in ("seed_k", "seed_k_edges", "hops", "fanout", "max_nodes", "max_edges"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise InputError(f"must be an integer >= 0, got {value!r}", field=name)


PCST_FIELDS = tuple(f.name for f in fields(PcstParams))  # given flat (topk, topk_e, cost_e), merged into `pcst`
OVERRIDABLE = tuple(f.name for f in fields(RetrievalParams)) + PCST_FIELDS


def params_to_dict(params: RetrievalParams) -> dict:
    """JSON-serialisable, PCST parameters nested."""
    return asdict(params)


def params_for(dataset: str | None, kind: str | None = None) -> RetrievalParams:
    """The paper's settings: per-sample graphs are searched whole, knowledge graphs expanded from seeds.

    With `kind` (a stored graph's "kg" or "per-sample"), any dataset name is accepted and a user's dataset gets
    WebQSP's PCST setting; without it the dataset must be one whose setting is known."""
    if kind is None:
        if dataset not in DEFAULTS:
            raise ConfigError(f"no retrieval defaults for dataset {dataset!r}; known: {', '.join(sorted(DEFAULTS))}")
        kind = "per-sample" if dataset in PER_SAMPLE_DATASETS else "kg"
    return RetrievalParams(pcst=DEFAULTS.get(dataset or "", DEFAULTS["webqsp"]), whole_graph=kind == "per-sample")


def with_overrides(params: RetrievalParams, overrides: Mapping[str, Any] | None) -> RetrievalParams:
    """`params` with single fields replaced (None means "not given"); PCST's fields may be given flat."""
    given = {name: value for name, value in (overrides or {}).items() if value is not None}
    unknown = sorted(set(given) - set(OVERRIDABLE))
    if unknown:
        raise ConfigError(f"unknown retrieval parameter(s) {', '.join(unknown)}; known: {', '.join(OVERRIDABLE)}")
    pcst = {name: given.pop(name) for name in PCST_FIELDS if name in given}
    if pcst:
        given["pcst"] = replace(given.get("pcst", params.pcst), **pcst)
    return replace(params, **given) if given else params
