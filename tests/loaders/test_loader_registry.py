from __future__ import annotations

import pytest

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.loaders import LOADERS, get_loader

EXPECTED = {
    "webqsp": ("webqsp", "kg"),
    "explagraphs": ("explagraphs", "per-sample"),
    "scenegraphs": ("scenegraphs", "per-sample"),
    "metaqa": ("metaqa", "kg"),
    "csv": ("csv", "per-sample"),
    "triples": ("triples", "kg"),
    "rdf": ("rdf", "kg"),
}


def test_registry_names_every_loader_with_its_dataset_and_kind():
    assert set(LOADERS) == set(EXPECTED)
    for name, (dataset, kind) in EXPECTED.items():
        loader = get_loader(name)
        assert (loader.DATASET, loader.KIND) == (dataset, kind)
        assert callable(loader.read)


def test_unknown_loader_is_a_config_error_listing_known_names():
    with pytest.raises(ConfigError) as caught:
        get_loader("freebase")
    message = str(caught.value)
    assert "freebase" in message
    for name in EXPECTED:
        assert name in message


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_unknown_option_is_rejected(name, tmp_path):
    with pytest.raises(ConfigError, match="unknown option"):
        get_loader(name).read(tmp_path, spilt="train")


@pytest.mark.parametrize("limit", [-1, 1.5, True, "3"])
def test_bad_limit_is_rejected(limit, tmp_path):
    with pytest.raises(ConfigError, match="limit"):
        get_loader("triples").read(tmp_path / "x.tsv", limit=limit)
