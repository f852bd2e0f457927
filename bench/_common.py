"""What the bench scripts share: the repository root, the machine and command a result records, the CLI as run."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"


def machine(**extra) -> dict:
    """The machine a result was measured on: platform and CPU count (and whatever `extra` adds)."""
    return {"platform": platform.platform(), "cpus": os.cpu_count(), **extra}


def command() -> str:
    """This run's command line as a result records it: `python bench/NAME.py ARGS`."""
    return " ".join(["python", f"bench/{Path(sys.argv[0]).name}", *sys.argv[1:]])


def write_json(path: Path, data, indent: int = 1, newline: bool = False) -> None:
    path.write_text(json.dumps(data, indent=indent, default=str) + "\n" * newline)


@dataclass
class GqaRun:
    stdout: str
    seconds: float
    peak_rss_mb: float  # the process's largest resident set


def run_gqa(*args: str, check: bool = True) -> GqaRun:
    """The CLI as a user runs it: its stdout, seconds and peak RSS (exits with its error when `check`)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-m", "gretriever_neo4j", *args], stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)  # the child's own resource usage, which subprocess.run drops
        process.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    print(f"$ gqa {' '.join(args)}  ({seconds:.0f} s)", flush=True)
    if check and process.returncode != 0:
        sys.exit(f"gqa {' '.join(args)} failed:\n{stderr[-3000:]}")
    return GqaRun(stdout, seconds, round(usage.ru_maxrss / 1024, 1))  # Linux reports kB


def gqa(*args: str, check: bool = True) -> tuple[str, float]:
    """The CLI as a user runs it: stdout and seconds (exits with its error when `check`)."""
    run = run_gqa(*args, check=check)
    return run.stdout, run.seconds
