import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_helpers import gqa  # noqa: E402
from service_helpers import SAMPLE  # noqa: E402


@pytest.fixture(scope="module")
def server_env(neo4j_settings):
    env = {**os.environ, "NEO4J_URI": neo4j_settings.uri, "NEO4J_PASSWORD": neo4j_settings.password}
    done = gqa("ingest", "webqsp", "--source", str(SAMPLE), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return env


