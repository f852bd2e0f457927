"""`train.walk_encoder_soup`: the soup of several walk encoders is one low-rank adapter whose merged change is the
mean of theirs, written where `gqa ask` reads it; encoders that do not fit together are refused."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import save_file

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.reader.walk_encoder import CONFIG_FILE, LAYERS_FILE, WalkEncoderConfig, read_saved
from gretriever_neo4j.train.walk_encoder_soup import main, soup

MAPS = ("encoder.layer.0.attention.self.query", "encoder.layer.1.output.dense")


def _part(seed: int, rank: int, alpha: int, candidates: int = 8) -> tuple[WalkEncoderConfig, dict]:
    generator = torch.Generator().manual_seed(seed)
    state = {}
    for path in MAPS:
        state[f"{path}.lora_A.weight"] = torch.randn(rank, 12, generator=generator).half()
        state[f"{path}.lora_B.weight"] = torch.randn(10, rank, generator=generator).half()
    config = WalkEncoderConfig(adapter="lora", rank=rank, alpha=alpha, candidates=candidates,
                               training={"seed": seed})
    return config, state


def _change(config: WalkEncoderConfig, state: dict, path: str) -> torch.Tensor:
    """What merging the adapter adds to the weight at `path` (as `walk_encoder._merge_lora` adds it)."""
    return (config.alpha / config.rank) * state[f"{path}.lora_B.weight"].float() @ \
        state[f"{path}.lora_A.weight"].float()


def test_the_soup_adds_the_mean_of_what_each_encoder_adds():
    parts = [_part(0, 8, 16), _part(1, 4, 4, candidates=16)]
    config, state = soup(parts)
    assert (config.rank, config.candidates) == (12, 16)
    assert [p["seed"] for p in config.training["soup_of"]] == [0, 1]
    for path in MAPS:
        mean = (_change(*parts[0], path) + _change(*parts[1], path)) / 2
        assert torch.allclose(_change(config, state, path), mean, atol=0.02, rtol=0.01)
        assert not torch.allclose(_change(*parts[0], path), mean, atol=0.5)  # neither part alone


def test_encoders_that_do_not_fit_together_are_refused():
    one = _part(0, 8, 16)
    with pytest.raises(ConfigError, match="two"):
        soup([one])
    layers = (WalkEncoderConfig(adapter="layers"), one[1])
    with pytest.raises(ConfigError, match="low-rank"):
        soup([one, layers])
    fewer = (one[0], {k: v for k, v in one[1].items() if MAPS[1] not in k})
    with pytest.raises(ConfigError, match="different weights"):
        soup([one, fewer])


def test_the_command_writes_a_soup_the_reader_loads(tmp_path, capsys):
    folders = []
    for seed in (0, 1):
        config, state = _part(seed, 4, 8)
        folder = tmp_path / f"part{seed}"
        folder.mkdir()
        save_file(state, str(folder / LAYERS_FILE))
        (folder / CONFIG_FILE).write_text(json.dumps(config.to_dict()))
        folders.append(str(folder))
    main([*folders, "--save", str(tmp_path / "soup"), "--candidates", "16"])
    config, state = read_saved(tmp_path / "soup")
    assert (config.rank, config.candidates, len(state)) == (8, 16, 2 * len(MAPS))
    assert "rank 8, 16 walks" in capsys.readouterr().out
