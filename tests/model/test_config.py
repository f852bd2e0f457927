import pytest

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.model.config import VARIANTS, ModelConfig


def test_defaults_follow_the_paper():
    config = ModelConfig()
    assert (config.variant, config.gnn, config.gnn_layers, config.gnn_heads, config.gnn_hidden) == \
        ("g-retriever", "graph-transformer", 4, 4, 1024)
    assert (config.projector_hidden, config.num_virtual_tokens, config.max_txt_len, config.max_new_tokens) == \
        (2048, 10, 512, 32)
    assert (config.lora_r, config.lora_alpha, config.lora_dropout, config.lora_targets) == \
        (8, 16, 0.05, ("q_proj", "v_proj"))
    assert config.llm == "smollm2-135m"
    assert config.gnn_in_dim == 384


@pytest.mark.parametrize("variant, graph, lora, prompt", [
    ("inference-only", False, False, False), ("prompt-tuning", False, False, True),
    ("g-retriever", True, False, False), ("lora", False, True, False), ("g-retriever-lora", True, True, False)])
def test_variant_properties(variant, graph, lora, prompt):
    config = ModelConfig(variant=variant)
    assert (config.uses_graph, config.uses_lora, config.uses_prompt_tuning) == (graph, lora, prompt)
    assert config.has_trainable_parts == (variant != "inference-only")


def test_dict_round_trip_keeps_every_field():
    config = ModelConfig(variant="g-retriever-lora", gnn="gat", lora_targets=("q_proj", "k_proj"),
                         use_projector=False, max_new_tokens=7)
    values = config.to_dict()
    assert values["lora_targets"] == ["q_proj", "k_proj"]
    assert ModelConfig.from_dict(values) == config
    assert len(VARIANTS) == 5


def test_unknown_keys_are_named():
    with pytest.raises(ConfigError, match="gnn_widht"):
        ModelConfig.from_dict({"variant": "g-retriever", "gnn_widht": 3})


@pytest.mark.parametrize("changes, field", [
    ({"variant": "graph-llm"}, "variant"), ({"gnn": "sage"}, "gnn"), ({"gnn_layers": 0}, "gnn_layers"),
    ({"gnn_hidden": 30, "gnn_heads": 4}, "gnn_hidden"), ({"lora_dropout": 1.5}, "lora_dropout"),
    ({"use_projector": "no"}, "use_projector"), ({"max_new_tokens": True}, "max_new_tokens")])
def test_invalid_values_name_their_field(changes, field):
    with pytest.raises(ConfigError, match=f"'{field}'"):
        ModelConfig(**changes)


def test_replace_validates():
    assert ModelConfig().replace(gnn="gcn").gnn == "gcn"
    with pytest.raises(ConfigError):
        ModelConfig().replace(bogus=1)
