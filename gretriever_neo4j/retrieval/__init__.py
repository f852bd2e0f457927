"""Retrieval as pure functions over arrays: seeds, bounded neighbourhood, PCST, textualisation.

No database here: the Neo4j path supplies the same inputs (hits, an `incident` callback, a CandidateGraph)
and reuses these functions, so both paths agree by construction.
"""

from gretriever_neo4j.retrieval.candidates import CandidateGraph, content_edge_id
from gretriever_neo4j.retrieval.in_memory import RetrievalResult, retrieve, retrieve_from_candidates
from gretriever_neo4j.retrieval.neighbourhood import (
                                                      IncidentEdge,
                                                      IncidentFn,
                                                      InMemoryIncidence,
                                                      expand,
                                                      incident_sort_key,
                                                      order_incident,
)
from gretriever_neo4j.retrieval.params import RetrievalParams, params_for, params_to_dict, with_overrides
from gretriever_neo4j.retrieval.pcst import DEFAULTS, PcstParams, Selection, pcst_subgraph
from gretriever_neo4j.retrieval.seeds import (
                                                      cosine_from_neo4j_score,
                                                      cosine_to_query,
                                                      edge_rank_key,
                                                      rank_top,
                                                      seed_nodes,
)
from gretriever_neo4j.retrieval.textualize import TextualizedSubgraph, count_tokens, graph_csv, textualize

__all__ = [
    "CandidateGraph", "content_edge_id",
    "IncidentEdge", "IncidentFn", "InMemoryIncidence", "expand", "incident_sort_key", "order_incident",
    "DEFAULTS", "PcstParams", "Selection", "pcst_subgraph",
    "RetrievalParams", "RetrievalResult", "params_for", "params_to_dict", "retrieve", "retrieve_from_candidates",
    "with_overrides",
    "cosine_from_neo4j_score", "cosine_to_query", "edge_rank_key", "rank_top", "seed_nodes",
    "TextualizedSubgraph", "count_tokens", "graph_csv", "textualize",
]
