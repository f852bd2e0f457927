"""Model configuration: which of the paper's five set-ups, which LLM and graph encoder, and the ablation switches.

The configuration travels inside every checkpoint, so a checkpoint alone is enough to rebuild its model.

Ablation switches (paper, Table 6), as interpreted here:
- `use_graph_encoder=False` ("w/o graph encoder"): no GNN; the raw node text embeddings are mean-pooled per graph
  and the pooled vector goes through the projector to become the graph token. The projector is then the only
  graph-side part that learns.
- `use_projector=False` ("w/o projection layer"): the MLP projector (Linear, Sigmoid, Linear) is removed and the
  GNN's last layer outputs the LLM's hidden size directly, so its pooled output *is* the graph token (identity).
  Without a GNN as well, a single Linear(gnn_in_dim -> LLM hidden) is the only mapping (identity when the sizes
  already match), because the embedder's and the LLM's sizes differ in general.
- `use_textualized_graph=False` ("w/o textualized graph"): the CSV description of the subgraph is left out of the
  prompt; only the graph token (if any) and the question remain.
Graph switches only matter for the variants that have a graph encoder ("g-retriever", "g-retriever-lora").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from ..errors import ConfigError

VARIANTS = ("inference-only", "prompt-tuning", "g-retriever", "lora", "g-retriever-lora")
GNN_KINDS = ("graph-transformer", "gat", "gcn")
ANSWER_FORMATS = ("paper", "grounded")
SOFT_TOKEN_POSITIONS = ("first", "last")
LLM_DTYPES = ("auto", "float32", "bfloat16", "float16")

# The embedder the rest of gqa uses by default (see gretriever_neo4j/embed.py); 384-d vectors.
DEFAULT_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_EMBEDDER_DIM = 384
DEFAULT_LLM = "smollm2-135m"


@dataclass(frozen=True)
class ModelConfig:
    variant: str = "g-retriever"
    llm: str = DEFAULT_LLM  # alias, hub id or local folder; see model.llm.load_llm
    gnn: str = "graph-transformer"
    gnn_layers: int = 4
    gnn_heads: int = 4
    gnn_hidden: int = 1024
    gnn_dropout: float = 0.0
    gnn_in_dim: int = DEFAULT_EMBEDDER_DIM  # the embedder's vector size, for node and edge features alike
    embedder: str = DEFAULT_EMBEDDER
    projector_hidden: int = 2048
    num_virtual_tokens: int = 10  # prompt tuning
    prompt_init_text: str = "Please answer the given question."  # initial value of the soft prompt
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.05
    lora_targets: tuple[str, ...] = ("q_proj", "v_proj")
    max_txt_len: int = 512  # tokens of the textualized graph kept
    max_new_tokens: int = 32  # generation length, and label tokens kept in training
    use_graph_encoder: bool = True
    use_projector: bool = True
    use_textualized_graph: bool = True
    # The system turn of chat-template LLMs; "" keeps the template's own default.
    system_prompt: str = "Answer the question using the graph."
    # What the model was trained to write: "paper" (free text after the paper's prompt) or "grounded" (node
    # names under the grounded prompt, `grounded.py`). `gqa ask` uses a checkpoint the way it was trained.
    answer_format: str = "paper"
    # Where the soft tokens (graph token, learned prompt) go: "first", right after BOS, as the paper; or "last",
    # after the question, right before the answer markers. With "last" and a frozen LLM, the text before them
    # is the same at every epoch, so its keys and values can be computed once (`model.text_cache`): training
    # then runs the LLM over a handful of positions per question instead of the whole prompt.
    soft_token_position: str = "first"
    # The LLM's weights: "auto" is bf16 on CUDA, float32 on CPU; "bfloat16" is much faster on CPUs with
    # AVX512-BF16.
    llm_dtype: str = "auto"

    def __post_init__(self) -> None:
        _check_choice("variant", self.variant, VARIANTS)
        _check_choice("gnn", self.gnn, GNN_KINDS)
        _check_choice("answer_format", self.answer_format, ANSWER_FORMATS)
        _check_choice("soft_token_position", self.soft_token_position, SOFT_TOKEN_POSITIONS)
        _check_choice("llm_dtype", self.llm_dtype, LLM_DTYPES)
        if not isinstance(self.llm, str) or not self.llm.strip():
            raise ConfigError("field 'llm': must name an LLM (alias, hub id or local folder)")
        for name in ("gnn_layers", "gnn_heads", "gnn_hidden", "gnn_in_dim", "projector_hidden",
                     "num_virtual_tokens", "lora_r", "lora_alpha", "max_txt_len", "max_new_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"field '{name}': must be a positive integer, got {value!r}")
        for name in ("gnn_dropout", "lora_dropout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
                raise ConfigError(f"field '{name}': must be a number in [0, 1), got {value!r}")
        for name in ("use_graph_encoder", "use_projector", "use_textualized_graph"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"field '{name}': must be true or false, got {getattr(self, name)!r}")
        if not isinstance(self.system_prompt, str):
            raise ConfigError(f"field 'system_prompt': must be text, got {self.system_prompt!r}")
        if isinstance(self.lora_targets, (list, tuple)):
            object.__setattr__(self, "lora_targets", tuple(str(t) for t in self.lora_targets))
        if not self.lora_targets or not isinstance(self.lora_targets, tuple):
            raise ConfigError("field 'lora_targets': must be a non-empty list of module names, "
                              f"got {self.lora_targets!r}")
        if self.gnn == "graph-transformer" and self.gnn_hidden % self.gnn_heads:
            raise ConfigError(f"field 'gnn_hidden': the graph transformer splits it over {self.gnn_heads} heads, "
                              f"so it must be a multiple of gnn_heads, got {self.gnn_hidden}")

    @property
    def uses_graph(self) -> bool:
        return self.variant in ("g-retriever", "g-retriever-lora")

    @property
    def uses_lora(self) -> bool:
        return self.variant in ("lora", "g-retriever-lora")

    @property
    def uses_prompt_tuning(self) -> bool:
        return self.variant == "prompt-tuning"

    @property
    def has_trainable_parts(self) -> bool:
        return self.variant != "inference-only"

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["lora_targets"] = list(self.lora_targets)
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ModelConfig:
        if not isinstance(values, dict):
            raise ConfigError(f"model config must be a mapping, got {type(values).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(f"unknown model config key(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        try:
            return cls(**values)
        except TypeError as exc:
            raise ConfigError(f"invalid model config: {exc}") from None

    def replace(self, **changes: Any) -> ModelConfig:
        return ModelConfig.from_dict({**self.to_dict(), **changes})


def _check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ConfigError(f"field '{name}': {value!r} is not one of {', '.join(choices)}")
