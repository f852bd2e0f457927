import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

# The toy samples and models are shared with tests/model.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "model"))
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture()
def cli_env(neo4j_settings, tmp_path, monkeypatch):
    """The CLI as a user runs it against the test Neo4j, with a GQA_HOME of its own and no server to defer to."""
    monkeypatch.setenv("NEO4J_URI", neo4j_settings.uri)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_settings.password)
    monkeypatch.setenv("GQA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GQA_SERVER", "off")
    return tmp_path
