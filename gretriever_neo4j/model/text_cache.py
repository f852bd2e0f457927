"""Keys and values of each question's prompt text, computed once, for a frozen LLM with the soft tokens last.

With `soft_token_position="last"` the LLM reads [BOS; desc; question; soft tokens; EOS_USER; answer]. When the
LLM is frozen (every variant but the LoRA ones), everything up to the soft tokens is the same at every epoch:
its attention keys and values can be kept (`build_text_cache`) and each training step runs the LLM over the
soft tokens, the answer markers and the label only, about 7 positions instead of ~130 for an ExplaGraphs
question. That makes an epoch of G-Retriever on CPU a matter of a minute rather than half an hour, with the
same model: attaching a cache changes the speed, not the result (tests/model/test_text_cache.py).

A cache is tied to what produced the text's keys and values (the `fingerprint`: LLM, its dtype, system prompt,
text length, textualized graph on or off); attaching one to another model is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..errors import ConfigError, InputError
from .sample import QABatch, QASample

FINGERPRINT_FIELDS = ("llm", "llm_dtype", "system_prompt", "max_txt_len", "use_textualized_graph")


def fingerprint(model: Any) -> dict[str, Any]:
    values = {name: getattr(model.config, name) for name in FINGERPRINT_FIELDS}
    values["dtype"] = str(model.llm.get_input_embeddings().weight.dtype)
    return values


class TextCache:
    """qid -> [layers, 2 (key, value), kv_heads, text tokens, head_dim] of that question's desc and question."""

    def __init__(self, entries: dict[str, torch.Tensor], fingerprint: dict[str, Any]):
        self.entries = entries
        self.fingerprint = fingerprint

    def __len__(self) -> int:
        return len(self.entries)

    def covers(self, batch: QABatch) -> bool:
        return all(qid in self.entries for qid in batch.qids)

    def update(self, other: TextCache) -> None:
        if other.fingerprint != self.fingerprint:
            raise ConfigError("cannot merge text caches built for different models")
        self.entries.update(other.entries)

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        torch.save({"fingerprint": self.fingerprint, "entries": self.entries}, partial)
        partial.replace(path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> TextCache:
        saved = torch.load(Path(path), weights_only=False)
        return cls(saved["entries"], saved["fingerprint"])

    def label_logits(self, model: Any, batch: QABatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """`GraphQAModel.label_logits` from the cached text: the LLM runs over soft tokens, EOS_USER and label."""
        from transformers import DynamicCache

        from .gretriever import IGNORE_INDEX, _decoder_and_head, _position_ids

        decoder, head = _decoder_and_head(model.llm)
        embed = model.llm.get_input_embeddings()
        device, dtype = embed.weight.device, embed.weight.dtype
        size = len(batch)
        targets = [ids[:model.config.max_new_tokens] + model._eos_ids for ids in model._texts_ids(batch.labels)]
        if len({len(t) for t in targets}) != 1:
            raise InputError("the text cache scores labels of one token length per batch", field="labels")
        new = embed(torch.tensor([model._eos_user_ids + t for t in targets], dtype=torch.long, device=device))
        soft = model.soft_tokens(batch)
        if soft is not None:
            new = torch.cat([soft.to(dtype), new], dim=1)
        texts = [self.entries[qid] for qid in batch.qids]
        lengths = [int(t.shape[3]) for t in texts]
        longest = max(lengths)
        prefix = model._prefix_cache() or []
        width = int(prefix[0][0].shape[2]) if prefix else 0
        layers = []
        for layer in range(texts[0].shape[0]):
            pair = []
            for which in (0, 1):
                rows = torch.stack([nn.functional.pad(t[layer, which], (0, 0, longest - n, 0))
                                    for t, n in zip(texts, lengths)]).to(device=device, dtype=dtype)
                if prefix:
                    rows = torch.cat([prefix[layer][which].expand(size, -1, -1, -1), rows], dim=2)
                pair.append(rows)
            layers.append(tuple(pair))
        mask = torch.tensor([[1] * width + [0] * (longest - n) + [1] * (n + new.shape[1]) for n in lengths],
                            dtype=torch.long, device=device)
        cache = DynamicCache(ddp_cache_data=layers, config=model.llm.config)
        with model._autocast():
            hidden = decoder(inputs_embeds=new, attention_mask=mask,
                             position_ids=_position_ids(mask)[:, -new.shape[1]:], past_key_values=cache,
                             use_cache=True, return_dict=True).last_hidden_state
            keep = len(targets[0]) + 1
            tail = hidden[:, -keep:].reshape(-1, hidden.shape[-1]).contiguous()
            logits = head(tail).view(size, keep, -1)
        logits = logits[:, :-1].float()
        labels = torch.tensor(targets, dtype=torch.long, device=device)
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                           ignore_index=IGNORE_INDEX)
        return loss, logits, labels


def check_cacheable(model: Any) -> None:
    if model.config.uses_lora:
        raise ConfigError("a text cache needs a frozen LLM; LoRA changes the text's keys and values as it trains")
    if model.config.soft_token_position != "last" and model.config.variant != "inference-only":
        raise ConfigError("a text cache needs soft_token_position='last' (with the soft tokens first, every text "
                          "token depends on them)")


@torch.no_grad()
def build_text_cache(model: Any, samples: Sequence[QASample], batch_size: int = 16,
                     on_progress: Any = None) -> TextCache:
    """Run the frozen LLM once over each sample's desc and question (after the cached BOS markers)."""
    from transformers import DynamicCache

    from .gretriever import _decoder_and_head, _position_ids

    check_cacheable(model)
    decoder, _ = _decoder_and_head(model.llm)
    if decoder is None:
        raise ConfigError("this LLM does not expose its decoder; it cannot be used with a text cache")
    embed = model.llm.get_input_embeddings()
    device = embed.weight.device
    descs = model._texts_ids([s.desc for s in samples], max_length=model.config.max_txt_len) \
        if model.config.use_textualized_graph else [[] for _ in samples]
    questions = model._texts_ids([s.question for s in samples])
    ids = [d[:model.config.max_txt_len] + q for d, q in zip(descs, questions)]
    if any(not row for row in ids):
        raise InputError("a sample has neither text nor question to cache", field="question")
    order = sorted(range(len(samples)), key=lambda i: len(ids[i]))  # little padding per batch
    prefix = model._prefix_cache() or []
    width = int(prefix[0][0].shape[2]) if prefix else 0
    entries: dict[str, torch.Tensor] = {}
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            rows = [ids[i] for i in chunk]
            longest = max(len(r) for r in rows)
            padded = torch.tensor([[model._pad_id] * (longest - len(r)) + r for r in rows], device=device)
            mask = torch.tensor([[1] * width + [0] * (longest - len(r)) + [1] * len(r) for r in rows], device=device)
            past = DynamicCache(ddp_cache_data=[(k.expand(len(rows), -1, -1, -1), v.expand(len(rows), -1, -1, -1))
                                                for k, v in prefix], config=model.llm.config) if prefix else None
            with model._autocast():
                out = decoder(inputs_embeds=embed(padded), attention_mask=mask,
                              position_ids=_position_ids(mask)[:, width:], past_key_values=past, use_cache=True,
                              return_dict=True)
            layers = [(k, v) for k, v, *_ in out.past_key_values]
            for row, index in enumerate(chunk):
                n = len(rows[row])
                entries[samples[index].qid] = torch.stack(
                    [torch.stack([k[row, :, -n:], v[row, :, -n:]]) for k, v in layers]).contiguous().clone()
            if on_progress:
                on_progress(min(start + batch_size, len(order)), len(order))
    finally:
        model.train(was_training)
    return TextCache(entries, fingerprint(model))


def attach_text_cache(model: Any, cache: TextCache | None) -> None:
    """Use `cache` for every batch it covers (None detaches); other batches take the full path."""
    if cache is None:
        model.__dict__.pop("_text_cache", None)
        return
    check_cacheable(model)
    if cache.fingerprint != fingerprint(model):
        raise ConfigError(f"this text cache was built for {cache.fingerprint}, not {fingerprint(model)}")
    model.__dict__["_text_cache"] = cache

