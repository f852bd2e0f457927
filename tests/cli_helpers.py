"""Running `gqa` in tests — the one place that does.

`gqa(...)`: the command as a real process (`python -m gretriever_neo4j`), for what only a process shows: its
exit code and stderr as `main()` makes them (one red line, no traceback), and an environment of its own.
`invoke(...)`: the command in this process through Typer's CliRunner against `gretriever_neo4j.cli.app`, for
a command whose success is all the test looks at (no process start, no second model load). Failures in-process
are raised, not turned into exit codes: `main()`'s error handling is not part of `app`.

tests/conftest.py puts this folder on sys.path, so every test imports it by name: `from cli_helpers import gqa`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence


def gqa(*args: str, env: Mapping[str, str] | None = None, stdin: str | None = None, timeout: float = 900,
        python_flags: Sequence[str] = ()) -> subprocess.CompletedProcess:
    """`gqa ARGS` as a subprocess; `env` is laid over this process's environment (which monkeypatch.setenv
    already changes), `stdin` is typed in, `python_flags` go to the interpreter (e.g. ("-X", "importtime"))."""
    return subprocess.run([sys.executable, *python_flags, "-m", "gretriever_neo4j", *args], capture_output=True,
                          text=True, input=stdin, timeout=timeout,
                          env=None if env is None else {**os.environ, **env})


def invoke(*args: str, env: Mapping[str, str] | None = None, stdin: str | None = None):
    """`gqa ARGS` in this process; returns click's Result (exit_code, stdout, stderr). Exceptions propagate."""
    from typer.testing import CliRunner

    from gretriever_neo4j.cli import app

    return CliRunner().invoke(app, list(args), env=dict(env) if env else None, input=stdin, catch_exceptions=False)
