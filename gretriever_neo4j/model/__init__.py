"""The G-Retriever model family: configuration, LLM loading, graph encoders, samples and the composed models.

Heavy imports (torch, transformers, peft) happen on first use of the corresponding names, so that importing
`gretriever_neo4j.model.citations` or `.config` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "ModelConfig": "config", "VARIANTS": "config", "GNN_KINDS": "config",
    "QASample": "sample", "QABatch": "sample", "collate": "sample", "format_question": "sample",
    "answers_label": "sample",
    "GraphEncoder": "gnn", "build_graph_encoder": "gnn", "mean_pool": "gnn",
    "load_llm": "llm", "tiny_llama": "llm", "byte_tokenizer": "llm", "hidden_size": "llm",
    "GraphQAModel": "gretriever", "GRetriever": "gretriever", "LLMOnly": "gretriever",
    "PromptTunedLLM": "gretriever", "build_model": "gretriever", "build_projector": "gretriever",
    "attach_lora": "gretriever", "prompt_markers": "gretriever",
    "check_citations": "citations", "parse_textualized_graph": "citations", "parse_citations": "citations",
    "summarize_citations": "citations", "CITATION_INSTRUCTION": "citations",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)
