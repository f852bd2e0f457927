"""G-Retriever and its baselines, composed from a loaded LLM, a graph encoder and a projector.

Every variant builds the LLM input the same way as the reference implementation:

    [BOS] + soft tokens + embed(desc[:max_txt_len] + question + EOS_USER) (+ embed(label[:max_new_tokens] + EOS))

where the soft tokens are nothing (inference-only, LoRA), the learned prompt (prompt tuning) or the projected
graph embedding (G-Retriever). The markers come from the tokenizer: with a chat template, BOS is the template's
text before the user's message and EOS_USER the text after it up to the assistant's turn; without one they are
the reference's Llama-2 markers '<s>[INST]' / '[/INST]'. EOS is the tokenizer's end-of-sequence token. Sequences
are padded on the left; the loss covers only the label tokens and the EOS after them.

Prompt tuning is implemented here as a learned [num_virtual_tokens, hidden] parameter placed right after BOS,
as the reference's PromptTuningLLM does, rather than through peft, so that it composes with the same input
builder as the other variants. LoRA uses peft (LoraConfig on q_proj/v_proj by default).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from ..errors import ConfigError, InputError, ModelError
from .config import ModelConfig
from .constrained import ConstrainedLogitsProcessor, TrieConstraint
from .gnn import GraphEncoder, build_graph_encoder, mean_pool
from .llm import hidden_size, load_llm, prepare_tokenizer
from .sample import QABatch

IGNORE_INDEX = -100
_USER_CONTENT = "\u2063GQA-USER-CONTENT\u2063"  # invisible separators: no real template text contains this


@dataclass(frozen=True)
class PromptMarkers:
    bos: str  # opens the user turn (reference: '<s>[INST]')
    eos_user: str  # closes the user turn and opens the answer (reference: '[/INST]')
    eos: str  # ends the answer (reference: '</s>')


def prompt_markers(tokenizer: Any, system_prompt: str | None = None) -> PromptMarkers:
    """The reference's BOS / EOS_USER / EOS markers adapted to this tokenizer (see the module docstring).

    With `system_prompt`, the chat template renders it as the system turn (a short one replaces a template's
    long default, which every training step would otherwise pay for); a template that refuses a system turn is
    rendered without it."""
    eos = tokenizer.eos_token or ""
    if getattr(tokenizer, "chat_template", None):
        conversations = [[{"role": "user", "content": _USER_CONTENT}]]
        if system_prompt:
            conversations.insert(0, [{"role": "system", "content": system_prompt},
                                     {"role": "user", "content": _USER_CONTENT}])
        for messages in conversations:
            try:
                rendered = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            except Exception:  # a template that needs other roles or arguments: try without, then the reference's
                continue
            if isinstance(rendered, str) and rendered.count(_USER_CONTENT) == 1:
                before, after = rendered.split(_USER_CONTENT)
                return PromptMarkers(bos=before, eos_user=after, eos=eos)
    return PromptMarkers(bos=(tokenizer.bos_token or "") + "[INST]", eos_user="[/INST]", eos=eos)


class GraphQAModel(nn.Module):
    """Shared input building, loss and generation; subclasses only decide the soft tokens after BOS."""

    def __init__(self, llm: Any, tokenizer: Any, config: ModelConfig):
        super().__init__()
        self.config = config
        if config.uses_lora and not _is_peft(llm):
            llm = attach_lora(llm, config)
        if not config.uses_lora:
            for parameter in llm.parameters():
                parameter.requires_grad_(False)
        self.llm = llm
        self.tokenizer = prepare_tokenizer(tokenizer)
        self.markers = prompt_markers(tokenizer, config.system_prompt)
        self._bos_ids = self._token_ids(self.markers.bos)
        self._eos_user_ids = self._token_ids(self.markers.eos_user)
        self._eos_ids = self._token_ids(self.markers.eos)
        self._pad_id = int(self.tokenizer.pad_token_id)

    # --- what subclasses provide -------------------------------------------------------------------------

    def soft_tokens(self, batch: QABatch) -> torch.Tensor | None:
        """[B, k, hidden] embeddings placed after BOS, or None."""
        return None

    # --- public API --------------------------------------------------------------------------------------

    @property
    def llm_hidden_size(self) -> int:
        return hidden_size(self.llm)

    @property
    def input_device(self) -> torch.device:
        return self.llm.get_input_embeddings().weight.device

    def forward(self, batch: QABatch, choices: Sequence[str] | None = None,
                class_weights: Sequence[float] | None = None) -> torch.Tensor:
        """Mean cross-entropy over the label tokens (and the EOS after them); with `choices`, the cross-entropy
        of the gold answer among those labels' likelihoods (`label_scoring.label_choice_loss`)."""
        if choices:
            from .label_scoring import label_choice_loss

            return label_choice_loss(self, batch, choices, class_weights)
        return self.label_logits(batch)[0]

    def label_logits(self, batch: QABatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(loss, logits, labels) at the positions that predict label tokens only.

        Labels sit at the right edge of every (left-padded) row, so the LM head runs on the last `keep`
        positions alone: over a 49k-token vocabulary it would otherwise cost as much as the transformer."""
        text_cache = self.__dict__.get("_text_cache")
        if text_cache is not None and text_cache.covers(batch):
            return text_cache.label_logits(self, batch)
        prefix = self._prefix_cache()
        inputs_embeds, attention_mask, labels = self._build_inputs(batch, with_labels=True,
                                                                   without_bos=prefix is not None)
        label_width = int((labels != IGNORE_INDEX).sum(dim=1).max())
        keep = label_width + 1
        decoder, head = _decoder_and_head(self.llm)
        with self._autocast():
            if decoder is not None:
                hidden = self._decode(decoder, batch, inputs_embeds, attention_mask)
                # A contiguous 2-D input keeps the head one matrix product (a 3-D slice runs as a batched
                # product over a copy of the 49k x hidden weight per sample).
                tail = hidden[:, -keep:].reshape(-1, hidden.shape[-1]).contiguous()
                logits = head(tail).view(hidden.shape[0], keep, -1)
            else:
                logits = self.llm(inputs_embeds=inputs_embeds, attention_mask=attention_mask,
                                  position_ids=_position_ids(attention_mask), logits_to_keep=keep,
                                  return_dict=True).logits
        logits = logits[:, :-1].float()  # position t predicts token t + 1
        targets = labels[:, -label_width:]
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                                           ignore_index=IGNORE_INDEX)
        return loss, logits, targets

    @torch.no_grad()
    def logits(self, batch: QABatch, *, with_labels: bool = True) -> torch.Tensor:
        """[B, L, vocab] logits of the left-padded input (with the label tokens appended when asked)."""
        inputs_embeds, attention_mask, _ = self._build_inputs(batch, with_labels=with_labels)
        with self._autocast():
            outputs = self.llm(inputs_embeds=inputs_embeds, attention_mask=attention_mask,
                               position_ids=_position_ids(attention_mask), return_dict=True)
        return outputs.logits.float()

    @torch.no_grad()
    def generate(self, batch: QABatch, *, max_new_tokens: int | None = None,
                 constraints: Sequence[TrieConstraint | None] | None = None) -> list[str]:
        """Greedy answers, one per sample, decoded without special tokens; with `constraints` (one per sample,
        None for free text) every answer follows its sample's grammar (`model.constrained`)."""
        return [text.strip() for text in self.tokenizer.batch_decode(
            self.generate_ids(batch, max_new_tokens=max_new_tokens, constraints=constraints),
            skip_special_tokens=True)]

    @torch.no_grad()
    def generate_ids(self, batch: QABatch, *, max_new_tokens: int | None = None,
                     constraints: Sequence[TrieConstraint | None] | None = None, streamer: Any = None,
                     cancel: Any = None) -> list[list[int]]:
        """The generated token ids of each sample (padding after its end removed). `streamer` receives tokens as
        they come (a `transformers` streamer); setting the `cancel` event (a `threading.Event`) stops early."""
        from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteria, StoppingCriteriaList

        inputs_embeds, attention_mask, _ = self._build_inputs(batch, with_labels=False)
        stop_ids = self._stop_token_ids()
        generation = GenerationConfig(max_new_tokens=max_new_tokens or self.config.max_new_tokens,
                                      do_sample=False, num_beams=1, pad_token_id=self._pad_id,
                                      eos_token_id=stop_ids or None, use_cache=True)
        processors = LogitsProcessorList()
        if constraints is not None:
            if len(constraints) != len(batch):
                raise InputError(f"{len(constraints)} constraints for {len(batch)} samples", field="constraints")
            processors.append(ConstrainedLogitsProcessor(constraints))
        stopping = StoppingCriteriaList()
        if cancel is not None:
            class _Cancelled(StoppingCriteria):
                def __call__(self, input_ids, scores, **kwargs):
                    return torch.full((input_ids.shape[0],), cancel.is_set(), dtype=torch.bool,
                                      device=input_ids.device)

            stopping.append(_Cancelled())
        with self._autocast():
            output_ids = self.llm.generate(inputs_embeds=inputs_embeds, attention_mask=attention_mask,
                                           generation_config=generation, logits_processor=processors,
                                           stopping_criteria=stopping, streamer=streamer)
        # Given only embeddings, decoder-only models return just the new tokens.
        rows = []
        for ids in output_ids.tolist():
            end = next((i for i, token in enumerate(ids) if token in stop_ids), None)
            rows.append(ids if end is None else ids[:end + 1])
        return rows

    def stop_token_ids(self) -> list[int]:
        return self._stop_token_ids()

    def trainable_parameters(self) -> list[nn.Parameter]:
        return [p for p in self.parameters() if p.requires_grad]

    def parameter_counts(self) -> tuple[int, int]:
        """(trainable, total) parameter counts."""
        total = sum(p.numel() for p in self.parameters())
        return sum(p.numel() for p in self.trainable_parameters()), total

    def module_state_dict(self) -> dict[str, torch.Tensor]:
        """State of everything except the LLM (graph encoder, projector, prompt), buffers included."""
        return {k: v.detach().cpu() for k, v in self.state_dict().items() if not k.startswith("llm.")}

    def load_module_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        own = self.module_state_dict()
        missing, unexpected = sorted(set(own) - set(state)), sorted(set(state) - set(own))
        if missing or unexpected:
            raise ConfigError(f"checkpoint does not fit this {self.config.variant} model: missing "
                              f"{missing or 'nothing'}, unexpected {unexpected or 'nothing'}")
        for key, value in state.items():
            if tuple(value.shape) != tuple(own[key].shape):
                raise ConfigError(f"checkpoint tensor '{key}' has shape {tuple(value.shape)} but this model "
                                  f"expects {tuple(own[key].shape)}")
        self.load_state_dict(state, strict=False)

    # --- input building ----------------------------------------------------------------------------------

    def _token_ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False).input_ids) if text else []

    def _texts_ids(self, texts: list[str], max_length: int | None = None) -> list[list[int]]:
        """Token ids of each text, cached: every epoch reads the same descriptions and questions again."""
        cache = self.__dict__.setdefault("_token_cache", {})
        missing = [t for t in dict.fromkeys(texts) if (t, max_length) not in cache]
        if missing:
            if len(cache) > 200_000:
                cache.clear()
            # Truncating in the tokenizer keeps the same leading tokens as slicing, without tokenizing huge
            # texts whole.
            limits = {"truncation": True, "max_length": max_length} if max_length else {}
            for text, ids in zip(missing, self.tokenizer(missing, add_special_tokens=False, **limits).input_ids):
                cache[(text, max_length)] = list(ids)
        return [cache[(t, max_length)] for t in texts]

    def _build_inputs(self, batch: QABatch, *, with_labels: bool, without_bos: bool = False
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Left-padded [BOS; soft tokens; desc; question; EOS_USER (; label; EOS)] embeddings, mask and labels;
        `without_bos` leaves BOS out (it comes from `_prefix_cache`)."""
        size = len(batch)
        if size == 0:
            raise InputError("empty batch")
        embed = self.llm.get_input_embeddings()
        device, dtype = embed.weight.device, embed.weight.dtype
        soft = self.soft_tokens(batch)
        questions = self._texts_ids(batch.questions)
        descs = self._texts_ids(batch.descs, max_length=self.config.max_txt_len) \
            if self.config.use_textualized_graph else [[] for _ in range(size)]
        targets = ([ids[:self.config.max_new_tokens] + self._eos_ids for ids in self._texts_ids(batch.labels)]
                   if with_labels else [[] for _ in range(size)])
        rows, label_rows = [], []
        last = self.config.soft_token_position == "last"
        for i in range(size):
            pieces = [] if without_bos else [embed(torch.tensor(self._bos_ids, dtype=torch.long, device=device))]
            text_ids = descs[i][:self.config.max_txt_len] + questions[i]
            if last:
                pieces.append(embed(torch.tensor(text_ids, dtype=torch.long, device=device)))
                text_ids = []
            if soft is not None:
                pieces.append(soft[i].to(dtype))
            text_ids = text_ids + self._eos_user_ids + targets[i]
            pieces.append(embed(torch.tensor(text_ids, dtype=torch.long, device=device)))
            row = torch.cat(pieces, dim=0)
            rows.append(row)
            label_rows.append([IGNORE_INDEX] * (row.shape[0] - len(targets[i])) + targets[i])
        longest = max(row.shape[0] for row in rows)
        pad = embed(torch.tensor([self._pad_id], dtype=torch.long, device=device))
        inputs_embeds = torch.stack([torch.cat([pad.expand(longest - r.shape[0], -1), r]) for r in rows])
        attention_mask = torch.tensor([[0] * (longest - r.shape[0]) + [1] * r.shape[0] for r in rows],
                                      dtype=torch.long, device=device)
        labels = None
        if with_labels:
            labels = torch.tensor([[IGNORE_INDEX] * (longest - len(lr)) + lr for lr in label_rows],
                                  dtype=torch.long, device=device)
        return inputs_embeds, attention_mask, labels

    def _decode(self, decoder: Any, batch: QABatch, inputs_embeds: torch.Tensor,
                attention_mask: torch.Tensor) -> torch.Tensor:
        """Last hidden states; with a prefix cache, of the positions after BOS only."""
        prefix = self._prefix_cache()
        if prefix is None:
            return decoder(inputs_embeds=inputs_embeds, attention_mask=attention_mask,
                           position_ids=_position_ids(attention_mask), return_dict=True).last_hidden_state
        from transformers import DynamicCache

        size, width = inputs_embeds.shape[0], len(self._bos_ids)
        full_mask = torch.cat([attention_mask.new_ones(size, width), attention_mask], dim=1)
        cache = DynamicCache(ddp_cache_data=[(k.expand(size, -1, -1, -1), v.expand(size, -1, -1, -1))
                                             for k, v in prefix], config=self.llm.config)
        return decoder(inputs_embeds=inputs_embeds, attention_mask=full_mask,
                       position_ids=_position_ids(full_mask)[:, width:], past_key_values=cache, use_cache=True,
                       return_dict=True).last_hidden_state

    def _prefix_cache(self) -> list[tuple[torch.Tensor, torch.Tensor]] | None:
        """Keys and values of the BOS markers, computed once. The frozen LLM (every variant but the LoRA ones)
        makes the same of them for every sample and step, so training need not compute them (forward and
        backward) again for every row of every batch."""
        if self.config.uses_lora or not self._bos_ids:
            return None
        decoder, _ = _decoder_and_head(self.llm)
        if decoder is None:
            return None
        embed = self.llm.get_input_embeddings()
        key = (embed.weight.device, embed.weight.dtype)
        cached = self.__dict__.get("_prefix")
        if cached is None or cached[0] != key:
            ids = torch.tensor([self._bos_ids], dtype=torch.long, device=embed.weight.device)
            with torch.no_grad(), self._autocast():
                out = decoder(inputs_embeds=embed(ids), use_cache=True, return_dict=True)
            layers = [(k.detach(), v.detach()) for k, v, *_ in out.past_key_values]
            cached = (key, layers)
            self.__dict__["_prefix"] = cached
        return cached[1]

    def _stop_token_ids(self) -> list[int]:
        ids = list(self._eos_ids[-1:])
        configured = getattr(getattr(self.llm, "generation_config", None), "eos_token_id", None)
        for token_id in configured if isinstance(configured, list) else [configured]:
            if token_id is not None and token_id not in ids:
                ids.append(int(token_id))
        return ids

    def _autocast(self) -> contextlib.AbstractContextManager:
        if self.input_device.type == "cuda":
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()


class LLMOnly(GraphQAModel):
    """The LLM reading the textualized graph and the question: "inference-only" (frozen) and "lora"."""


class PromptTunedLLM(GraphQAModel):
    """A frozen LLM with `num_virtual_tokens` learned prompt embeddings after BOS."""

    def __init__(self, llm: Any, tokenizer: Any, config: ModelConfig):
        super().__init__(llm, tokenizer, config)
        # As the reference: start from the embeddings of an instruction, repeated to fill the virtual tokens.
        init_ids = list(self.tokenizer(config.prompt_init_text).input_ids) or [self._pad_id]
        init_ids = (init_ids * math.ceil(config.num_virtual_tokens / len(init_ids)))[:config.num_virtual_tokens]
        embed = self.llm.get_input_embeddings()
        initial = embed.weight[torch.tensor(init_ids, device=embed.weight.device)].detach().float().clone()
        self.prompt = nn.Parameter(initial)

    def soft_tokens(self, batch: QABatch) -> torch.Tensor:
        return self.prompt.unsqueeze(0).expand(len(batch), -1, -1)


class GRetriever(GraphQAModel):
    """G-Retriever: a graph encoder's mean-pooled output, projected to one LLM token after BOS.

    `gnn` may be None (ablation "w/o graph encoder"): the raw node embeddings are pooled instead. Graphs without
    nodes get a learned "empty graph" vector in place of the pooled embedding.
    """

    def __init__(self, llm: Any, tokenizer: Any, gnn: GraphEncoder | None, projector: nn.Module,
                 config: ModelConfig):
        super().__init__(llm, tokenizer, config)
        device = self.input_device
        self.gnn = gnn.to(device) if gnn is not None else None
        self.projector = projector.to(device)
        pooled_width = gnn.out_dim if gnn is not None else config.gnn_in_dim
        self.empty_graph = nn.Parameter(torch.zeros(pooled_width, device=device))

    def encode_graphs(self, batch: QABatch) -> torch.Tensor:
        """[B, pooled width] graph embeddings before the projector."""
        device = self.input_device
        graph = batch.graph.to(device)
        size = len(batch)
        x = graph.x.float()
        if x.shape[0] == 0:
            pooled = self.empty_graph.new_zeros(size, self.empty_graph.shape[0])
        else:
            if x.shape[1] != self.config.gnn_in_dim:
                raise ConfigError(f"node embeddings have {x.shape[1]} dimensions but the model was built for "
                                  f"gnn_in_dim={self.config.gnn_in_dim} (embedder {self.config.embedder})")
            nodes = self.gnn(x, graph.edge_index, graph.edge_attr.float()) if self.gnn is not None else x
            pooled = mean_pool(nodes, graph.batch, size)
        empty = (batch.node_counts.to(device) == 0).unsqueeze(-1)
        return torch.where(empty, self.empty_graph.expand_as(pooled), pooled)

    def soft_tokens(self, batch: QABatch) -> torch.Tensor:
        return self.projector(self.encode_graphs(batch)).unsqueeze(1)


def build_projector(config: ModelConfig, in_dim: int, llm_hidden: int) -> nn.Module:
    """The reference MLP (Linear, Sigmoid, Linear), or the ablation's direct mapping (see config docs)."""
    if config.use_projector:
        return nn.Sequential(nn.Linear(in_dim, config.projector_hidden), nn.Sigmoid(),
                             nn.Linear(config.projector_hidden, llm_hidden))
    if in_dim == llm_hidden:
        return nn.Identity()
    return nn.Linear(in_dim, llm_hidden)


def attach_lora(llm: Any, config: ModelConfig) -> Any:
    """Wrap the LLM with trainable LoRA adapters; the base weights stay frozen."""
    from peft import LoraConfig, get_peft_model

    lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                      target_modules=list(config.lora_targets), bias="none", task_type="CAUSAL_LM")
    try:
        return get_peft_model(llm, lora)
    except ValueError as exc:
        raise ModelError(f"cannot attach LoRA to modules {list(config.lora_targets)}: {exc}") from None


def build_model(config: ModelConfig, *, llm: Any = None, tokenizer: Any = None,
                device: str = "auto") -> GraphQAModel:
    """The model `config` describes (in eval mode), loading its LLM unless one is given with its tokenizer."""
    if llm is None:
        llm, tokenizer = load_llm(config.llm, device=device,
                                  dtype=None if config.llm_dtype == "auto" else config.llm_dtype)
    elif tokenizer is None:
        raise ConfigError("build_model: an LLM was given without its tokenizer")
    if config.variant in ("inference-only", "lora"):
        return LLMOnly(llm, tokenizer, config).eval()
    if config.variant == "prompt-tuning":
        return PromptTunedLLM(llm, tokenizer, config).eval()
    llm_hidden = hidden_size(llm)
    gnn = None
    if config.use_graph_encoder:
        gnn = build_graph_encoder(config.gnn, in_dim=config.gnn_in_dim, hidden=config.gnn_hidden,
                                  out_dim=config.gnn_hidden if config.use_projector else llm_hidden,
                                  layers=config.gnn_layers, heads=config.gnn_heads, dropout=config.gnn_dropout)
    pooled_width = gnn.out_dim if gnn is not None else config.gnn_in_dim
    return GRetriever(llm, tokenizer, gnn, build_projector(config, pooled_width, llm_hidden), config).eval()


def _decoder_and_head(llm: Any) -> tuple[Any, Any]:
    """The transformer body and the LM head of a causal LM (through a peft wrapper), or (None, None) when the
    model does not expose them; then the model's own forward with `logits_to_keep` is used."""
    base = llm.get_base_model() if _is_peft(llm) else llm
    get_decoder = getattr(base, "get_decoder", None)
    try:
        decoder = get_decoder() if callable(get_decoder) else None
        head = base.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        return None, None
    if decoder is None or head is None or decoder is base:
        return None, None
    return decoder, head


def _position_ids(attention_mask: torch.Tensor) -> torch.Tensor:
    """Positions counted from each row's first real token, so left padding does not shift them."""
    return (attention_mask.cumsum(-1) - 1).clamp(min=0)


def _is_peft(llm: Any) -> bool:
    try:
        from peft import PeftModel
    except ImportError:
        return False
    return isinstance(llm, PeftModel)
