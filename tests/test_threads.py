"""`threads.one_blas_thread`: numpy's BLAS runs one thread in the processes that answer questions, whether numpy
was loaded before the call or after, and a user's own setting stands. Each case runs in a fresh interpreter:
BLAS threads are per process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

_REPORT = ("from threadpoolctl import threadpool_info; import json; "
           "print(json.dumps([i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas']))")


def _blas_threads(code: str, **env: str) -> list[int]:
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"} | env
    done = subprocess.run([sys.executable, "-c", code + "\n" + _REPORT], capture_output=True, text=True,
                          env=environment, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: BLAS has one thread anyway")
@pytest.mark.parametrize("numpy_first", [False, True])
def test_numpy_blas_runs_one_thread_whether_numpy_loaded_before_or_after(numpy_first):
    before = "import numpy\n" if numpy_first else ""
    assert _blas_threads("import numpy") != [1]  # the library's own default: a thread per core
    assert _blas_threads(before + "from gretriever_neo4j import threads; threads.one_blas_thread()\nimport numpy") \
        == [1]


def test_a_users_own_setting_stands():
    code = "from gretriever_neo4j import threads; threads.one_blas_thread()\nimport numpy"
    assert _blas_threads(code, OPENBLAS_NUM_THREADS="2") == [2]
