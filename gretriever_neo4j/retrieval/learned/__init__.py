"""A learned, question-conditioned retriever (beyond the paper), in the spirit of SubgraphRAG (Li et al., 2024).

Scorer (`scorer`)
    An MLP over [question vector, head vector, relation vector, tail vector, structure] -> two logits, where
    structure = one-hot hop distance of head and of tail from the seeds (0..max_hops, "farther") and the log
    degree of both ends. Head "relevance": the triple lies on the question's reasoning path. Head "answer": it
    does and one of its ends is an answer. The first layer is a sum of per-part projections (the same function
    as one linear layer over the concatenation), so every node's projection is computed once per graph and a
    triple costs a few vector additions. The question vector is that of the question with the seeds' names
    masked ("who directed X"): what is asked, not what it is asked about (`mask_topics`).

Training (`training`)
    Binary cross-entropy on weak labels (`weak_labels.pattern_edges`, or plain shortest paths) from the gold
    topic entities to the gold answers. Negatives are sampled from the candidate neighbourhood the retriever
    will score: the incident triples of the labelled paths' nodes (hard) and of random nodes within reach.
    CPU, minutes.

Inference, a beam, bounded (`search`)
    Seeds come from hybrid linking (`linking.link_seeds`). Hop by hop (at most `max_hops`) the incident triples
    of the frontier are scored, and only the `beam_nodes` best new nodes (by relevance of their best triple)
    become the next frontier, so hubs are scored but never expanded blindly. Then triples are taken greedily
    for the budget (`max_edges`), each with the chain of triples that connected it to a seed, so the result is
    connected: half of the budget by the answer head, the rest by relevance (`selection`). It is returned as the
    paper's `RetrievalResult` (CandidateGraph + Selection + textualisation), which the generator consumes
    unchanged. Nothing here knows a relation name.

The graph is reached through a source (`sources`): a `KnowledgeGraph` in memory, or `StoreGraphSource` over
Neo4j (`GraphStore.kg_incident` etc.), which fetches only the neighbourhood it expands. The settings live in
`config`, the single-file checkpoints in `checkpoint`, the retrieval metrics in `metrics`.

This package re-exports the names the rest of the project imports from `gretriever_neo4j.retrieval.learned`.
"""

from gretriever_neo4j.retrieval.learned.checkpoint import load_checkpoint, save_checkpoint
from gretriever_neo4j.retrieval.learned.config import RetrieverConfig
from gretriever_neo4j.retrieval.learned.metrics import answer_coverage, answer_hit, percentile, subgraph_size
from gretriever_neo4j.retrieval.learned.scorer import structure_features
from gretriever_neo4j.retrieval.learned.search import BeamResult, LearnedRetriever
from gretriever_neo4j.retrieval.learned.sources import StoreGraphSource, as_source
from gretriever_neo4j.retrieval.learned.training import TrainingQuestion, train_retriever, training_texts

__all__ = [
    "BeamResult", "LearnedRetriever", "RetrieverConfig", "StoreGraphSource", "TrainingQuestion", "answer_coverage",
    "answer_hit", "as_source", "load_checkpoint", "percentile", "save_checkpoint", "structure_features",
    "subgraph_size", "train_retriever", "training_texts",
]
