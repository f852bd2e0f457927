"""Small deterministic inputs for model and training tests: random graphs, a tiny random Llama, toy configs."""

from __future__ import annotations

import torch

from gretriever_neo4j.model.config import ModelConfig
from gretriever_neo4j.model.gretriever import build_model
from gretriever_neo4j.model.llm import tiny_llama
from gretriever_neo4j.model.sample import QASample, format_question

EMBED_DIM = 16
WORDS = ["cat", "dog", "sun", "sea", "owl", "fig"]


def toy_config(variant: str = "g-retriever", **changes) -> ModelConfig:
    values = dict(variant=variant, llm="tiny-random-llama", gnn="graph-transformer", gnn_layers=2, gnn_heads=4,
                  gnn_hidden=32, gnn_in_dim=EMBED_DIM, embedder="toy", projector_hidden=32,
                  num_virtual_tokens=4, max_txt_len=48, max_new_tokens=6)
    values.update(changes)
    return ModelConfig(**values)


def toy_model(variant: str = "g-retriever", *, seed: int = 0, **changes):
    """A model on the tiny random Llama; `seed` fixes the graph encoder's and projector's initial weights."""
    llm, tokenizer = tiny_llama()
    torch.manual_seed(seed)
    return build_model(toy_config(variant, **changes), llm=llm, tokenizer=tokenizer)


def random_sample(index: int, nodes: int, *, label: str | None = None, question: str = "what is it?",
                  desc: str | None = None) -> QASample:
    generator = torch.Generator().manual_seed(1000 + index)
    x = torch.randn(nodes, EMBED_DIM, generator=generator)
    if nodes > 1:
        edges = torch.tensor([[i, (i + 1) % nodes] for i in range(nodes)], dtype=torch.long).T
    else:
        edges = torch.zeros(2, 0, dtype=torch.long)
    edge_attr = torch.randn(edges.shape[1], EMBED_DIM, generator=generator)
    if desc is None:
        desc = "node_id,node_attr\n" + "".join(f"{i},n{i}\n" for i in range(nodes))
        desc += "\nsrc,edge_attr,dst\n" + "".join(f"{int(s)},r,{int(d)}\n" for s, d in edges.T.tolist())
    word = label if label is not None else WORDS[index % len(WORDS)]
    return QASample(qid=f"q{index}", question=format_question(question), desc=desc, label=word, answers=[word],
                    x=x, edge_index=edges, edge_attr=edge_attr)


def memorisation_set(count: int = 4, *, same_text: bool = False) -> list[QASample]:
    """`count` samples with distinct labels; with `same_text` the texts are identical, so only graphs differ."""
    return [random_sample(i, 3 + i % 3, question="what?" if same_text else f"item {i}?",
                          desc="" if same_text else None) for i in range(count)]
