"""Questions embedded through ONNX Runtime: the same sentence-transformers model, exported locally once.

A question is one short text: PyTorch spends most of its time on per-call overhead there, ONNX Runtime a fraction
(bench/results/serve.json). The export is made from the model the embedder already loaded (no hub), for the
usual sentence-transformers shape only — Transformer, mean pooling, Normalize — with pooling and normalisation
inside the graph, and kept under GQA_HOME/onnx keyed by the model's weights, so it is made once per model and
machine. A session's idle threads sleep instead of spinning: a question runs several sessions in turn (this
embedder, the walk encoder, the hop reader), and threads one of them leaves spinning take the cores the next needs
(and Neo4j's). Anything else (another pooling, no onnxruntime installed, a failed export) keeps PyTorch: `load` returns
None and says why in the log.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def supported(model) -> bool:
    """Transformer -> mean Pooling -> Normalize, as all-MiniLM-L6-v2 and most sentence-transformers models."""
    names = [type(module).__name__ for module in model]
    if names != ["Transformer", "Pooling", "Normalize"]:
        return False
    pooling = model[1]
    mode = pooling.get_pooling_mode_str() if hasattr(pooling, "get_pooling_mode_str") else getattr(
        pooling, "pooling_mode", None)
    return mode in (None, "mean") and bool(getattr(pooling, "pooling_mode_mean_tokens", True))


def _fingerprint(model) -> str:
    """Tells models apart by a slice of every tensor: models that share all but their last layers (the walk
    encoder and its embedder) get exports of their own."""
    digest = hashlib.sha1()
    for name, tensor in sorted(model[0].auto_model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().numpy().tobytes()[:4096])
    return digest.hexdigest()[:16]


class OnnxQueryEncoder:
    def __init__(self, session, tokenizer, max_length: int):
        self.session = session
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.inputs = [i.name for i in session.get_inputs()]

    def encode(self, texts: list[str]) -> np.ndarray:
        encoded = self.tokenizer(texts, return_tensors="np", padding=True, truncation=True,
                                 max_length=self.max_length)
        feed = {name: np.asarray(encoded[name], dtype=np.int64) for name in self.inputs if name in encoded}
        if "token_type_ids" in self.inputs and "token_type_ids" not in feed:
            feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
        return np.asarray(self.session.run(None, feed)[0], dtype=np.float32)


def load(model, folder: Path, *, threads: int | None = None) -> OnnxQueryEncoder | None:
    """An ONNX encoder equal to `model` (a SentenceTransformer on CPU), exporting it into `folder` once."""
    if os.environ.get("GQA_ONNX", "1") in ("0", "off", "false"):
        return None
    if not supported(model):
        log.info("query embeddings stay on PyTorch: %s is not Transformer + mean pooling + Normalize",
                 [type(m).__name__ for m in model])
        return None
    try:
        import onnxruntime as ort
    except ImportError:
        log.info("query embeddings stay on PyTorch: onnxruntime is not installed")
        return None
    try:
        path = folder / f"{_fingerprint(model)}.onnx"
        if not path.is_file():
            _export(model, path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or min(os.cpu_count() or 1, 4)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        return OnnxQueryEncoder(session, model.tokenizer, int(model.max_seq_length or 512))
    except Exception as error:  # an exporter or runtime this model does not suit: PyTorch still answers
        log.warning("query embeddings stay on PyTorch: the ONNX export failed (%s: %s)",
                    error.__class__.__name__, error)
        return None


def _export(model, path: Path) -> None:
    import warnings

    import torch

    class Pooled(torch.nn.Module):
        def __init__(self, transformer):
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            hidden = self.transformer(input_ids=input_ids, attention_mask=attention_mask,
                                      token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=-1)

    example = model.tokenizer(["an example question"], return_tensors="pt")
    args = tuple(example.get(name, torch.zeros_like(example["input_ids"])) for name in INPUTS)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.partial")
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS} | {"embedding": {0: "batch"}}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(Pooled(model[0].auto_model).eval(), args, str(partial), input_names=list(INPUTS),
                          output_names=["embedding"], dynamic_axes=axes, opset_version=17, dynamo=False)
    partial.replace(path)  # atomic: another process exporting the same model at once is harmless
    log.info("exported the query encoder to %s", path)
