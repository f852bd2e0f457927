import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_helpers import gqa  # noqa: E402
from service_helpers import SAMPLE, neo4j_env  # noqa: E402


@pytest.fixture(scope="module")
def server_env(neo4j_settings):
    env = neo4j_env(neo4j_settings)
    done = gqa("ingest", "webqsp", "--source", str(SAMPLE), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return env


