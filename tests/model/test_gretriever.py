import pytest
import torch
from torch import nn

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.model.gretriever import (
    IGNORE_INDEX,
    GRetriever,
    LLMOnly,
    PromptTunedLLM,
    build_model,
    prompt_markers,
)
from gretriever_neo4j.model.llm import byte_tokenizer, tiny_llama
from gretriever_neo4j.model.sample import QASample, collate
from gretriever_neo4j.train.trainer import TrainConfig, train

from model_toys import EMBED_DIM, memorisation_set, random_sample, toy_config, toy_model

VARIANTS = ["inference-only", "prompt-tuning", "g-retriever", "lora", "g-retriever-lora"]


def empty_graph_sample(qid: str, label: str = "none") -> QASample:
    return QASample(qid=qid, question="Question: anything?\nAnswer: ", desc="", label=label, answers=[label],
                    x=torch.zeros(0, EMBED_DIM), edge_index=torch.zeros(2, 0, dtype=torch.long))


def test_reference_markers_without_chat_template():
    markers = prompt_markers(byte_tokenizer())
    assert (markers.bos, markers.eos_user, markers.eos) == ("<s>[INST]", "[/INST]", "</s>")


def test_markers_follow_a_chat_template():
    tokenizer = byte_tokenizer()
    tokenizer.chat_template = ("{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}</s>{% endfor %}"
                               "{% if add_generation_prompt %}<s>assistant: {% endif %}")
    markers = prompt_markers(tokenizer)
    assert (markers.bos, markers.eos_user, markers.eos) == ("<s>user: ", "</s><s>assistant: ", "</s>")


def test_input_layout_matches_the_reference():
    model = toy_model("g-retriever", max_txt_len=5).eval()
    sample = random_sample(0, 3, label="cat", question="q?", desc="abcdefghij")
    short = random_sample(1, 2, label="a", question="q?", desc="xy")
    embeds, mask, labels = model._build_inputs(collate([sample, short]), with_labels=True)
    tok = model.tokenizer
    text_len = 5 + len(tok("Question: q?\nAnswer: ", add_special_tokens=False).input_ids)
    bos, eos_user = 2, 1  # '<s>' '[INST]' and '[/INST]' are single tokens in the byte tokenizer
    first_len = bos + 1 + text_len + eos_user + 3 + 1  # + graph token, + 'cat' + '</s>'
    second_len = bos + 1 + (text_len - 3) + eos_user + 1 + 1
    assert embeds.shape[:2] == (2, first_len)
    assert mask[0].tolist() == [1] * first_len
    assert mask[1].tolist() == [0] * (first_len - second_len) + [1] * second_len
    cat_ids = tok("cat", add_special_tokens=False).input_ids + [tok.eos_token_id]
    assert labels[0].tolist() == [IGNORE_INDEX] * (first_len - 4) + cat_ids
    assert labels[1].tolist()[-2:] == tok("a", add_special_tokens=False).input_ids + [tok.eos_token_id]
    assert (labels[1] != IGNORE_INDEX).sum() == 2
    # The graph token sits right after BOS; the rest are word embeddings of the expected ids.
    word = model.llm.get_input_embeddings()
    assert torch.allclose(embeds[0, :2], word(torch.tensor(tok("<s>[INST]", add_special_tokens=False).input_ids)))
    assert torch.allclose(embeds[0, 2], model.soft_tokens(collate([sample]))[0, 0], atol=1e-5)
    assert torch.allclose(embeds[0, 3:8], word(torch.tensor(tok("abcde", add_special_tokens=False).input_ids)))


def test_left_padding_does_not_change_a_sample():
    model = toy_model("g-retriever-lora").eval()
    long, short = random_sample(0, 4, question="a much longer question here?"), random_sample(1, 2)
    batch_logits = model.logits(collate([long, short]))
    alone = model.logits(collate([short]))
    assert torch.allclose(batch_logits[1, -alone.shape[1]:], alone[0], atol=1e-5)
    batched = model.generate(collate([long, short]))
    assert batched == model.generate(collate([long])) + model.generate(collate([short]))


@pytest.mark.parametrize("variant", VARIANTS)
def test_empty_graphs_in_a_batch(variant):
    model = toy_model(variant)
    mixed = collate([random_sample(0, 3), empty_graph_sample("e1"), random_sample(1, 1)])
    only_empty = collate([empty_graph_sample("e2"), empty_graph_sample("e3")])
    model.train()
    for batch in (mixed, only_empty):
        loss = model(batch)
        assert torch.isfinite(loss)
        if model.trainable_parameters():
            loss.backward()
    model.eval()
    assert len(model.generate(mixed)) == 3 and len(model.generate(only_empty)) == 2


def test_empty_graph_uses_the_learned_empty_embedding():
    model = toy_model("g-retriever").eval()
    with torch.no_grad():
        model.empty_graph.fill_(0.5)
    encoded = model.encode_graphs(collate([random_sample(0, 3), empty_graph_sample("e")]))
    assert torch.equal(encoded[1], torch.full((32,), 0.5))
    assert not torch.equal(encoded[0], torch.full((32,), 0.5))


@pytest.mark.parametrize("variant, expected_class", [
    ("inference-only", LLMOnly), ("prompt-tuning", PromptTunedLLM), ("g-retriever", GRetriever),
    ("lora", LLMOnly), ("g-retriever-lora", GRetriever)])
def test_only_the_intended_parameters_train(variant, expected_class):
    model = toy_model(variant)
    assert type(model) is expected_class
    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    llm_trainable = {name for name in trainable if name.startswith("llm.")}
    if variant in ("lora", "g-retriever-lora"):
        assert llm_trainable and all("lora_" in name for name in llm_trainable)
    else:
        assert not llm_trainable
    own = trainable - llm_trainable
    if variant == "inference-only":
        assert not trainable
    elif variant == "prompt-tuning":
        assert own == {"prompt"} and tuple(model.prompt.shape) == (4, 64)
    elif variant.startswith("g-retriever"):
        assert "empty_graph" in own and any(n.startswith("gnn.") for n in own)
        assert any(n.startswith("projector.") for n in own)
    else:
        assert not own


def test_prompt_is_initialised_from_the_instruction_embeddings():
    model = toy_model("prompt-tuning", num_virtual_tokens=6, prompt_init_text="ab")
    ids = model.tokenizer("ab").input_ids  # 2 tokens, repeated to fill 6
    expected = model.llm.get_input_embeddings().weight[torch.tensor((ids * 3)[:6])]
    assert torch.equal(model.prompt.detach(), expected)


def test_ablation_without_graph_encoder_pools_raw_embeddings():
    model = toy_model("g-retriever", use_graph_encoder=False)
    assert model.gnn is None
    assert model.projector[0].in_features == EMBED_DIM
    sample = random_sample(0, 3)
    pooled = model.encode_graphs(collate([sample]))
    assert torch.allclose(pooled[0], sample.x.mean(0))


def test_ablation_without_projector():
    with_gnn = toy_model("g-retriever", use_projector=False)
    assert isinstance(with_gnn.projector, nn.Identity)
    assert with_gnn.gnn.out_dim == 64  # the GNN outputs the LLM's hidden size itself
    assert with_gnn.soft_tokens(collate([random_sample(0, 3)])).shape == (1, 1, 64)
    without_either = toy_model("g-retriever", use_projector=False, use_graph_encoder=False)
    assert isinstance(without_either.projector, nn.Linear)
    assert (without_either.projector.in_features, without_either.projector.out_features) == (EMBED_DIM, 64)


def test_ablation_without_textualized_graph_ignores_desc():
    a = random_sample(0, 3, desc="node_id,node_attr\n0,alpha\n")
    b = random_sample(0, 3, desc="node_id,node_attr\n0,omega beta gamma\n")
    blind = toy_model("g-retriever", use_textualized_graph=False).eval()
    assert torch.equal(blind.logits(collate([a])), blind.logits(collate([b])))
    seeing = toy_model("g-retriever").eval()
    assert seeing.logits(collate([a])).shape != seeing.logits(collate([b])).shape


def test_wrong_embedding_width_names_both_sizes():
    model = toy_model("g-retriever")
    sample = QASample(qid="w", question="q", desc="", label="a", answers=[], x=torch.zeros(2, 8),
                      edge_index=torch.zeros(2, 0, dtype=torch.long))
    with pytest.raises(ConfigError, match=r"8 dimensions.*gnn_in_dim=16"):
        model(collate([sample]))


def test_build_model_needs_the_tokenizer_with_the_llm():
    llm, _ = tiny_llama()
    with pytest.raises(ConfigError, match="tokenizer"):
        build_model(toy_config(), llm=llm)


@pytest.mark.parametrize("variant", ["prompt-tuning", "g-retriever", "lora", "g-retriever-lora"])
def test_each_trainable_variant_learns_and_generates(variant, tmp_path):
    samples = memorisation_set(4, same_text=variant.startswith("g-"))
    model = toy_model(variant, seed=1)
    history = train(model, samples, [], TrainConfig(lr=1e-2, min_lr=1e-2, batch_size=4, grad_accum=1, epochs=30,
                                                    warmup_epochs=0, patience=100, seed=1), tmp_path)
    losses = [record.train_loss for record in history.epochs]
    assert all(torch.isfinite(torch.tensor(losses)))
    assert losses[-1] < losses[0] * (0.85 if variant in ("prompt-tuning", "g-retriever") else 0.3)
    answers = model.eval().generate(collate(samples))
    assert len(answers) == 4 and all(isinstance(a, str) for a in answers)


@pytest.mark.slow
def test_g_retriever_lora_memorises_through_the_graph_token(tmp_path):
    # Identical text for every sample: only the graphs differ, so distinct right answers need the graph token.
    samples = memorisation_set(4, same_text=True)
    model = toy_model("g-retriever-lora", seed=1)
    train(model, samples, [], TrainConfig(lr=1e-2, min_lr=1e-2, batch_size=4, grad_accum=1, epochs=60,
                                          warmup_epochs=0, patience=100, seed=1), tmp_path)
    answers = model.eval().generate(collate(samples))
    correct = sum(answer == sample.label for answer, sample in zip(answers, samples))
    assert correct >= 3 and len(set(answers)) >= 3, answers


def test_inference_only_generates_without_training():
    model = toy_model("inference-only").eval()
    answers = model.generate(collate([random_sample(0, 2), random_sample(1, 3)]), max_new_tokens=3)
    assert len(answers) == 2
    assert all(len(a) <= 3 for a in answers)  # at most one character per byte token
