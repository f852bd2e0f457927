"""What the bench scripts share: the repository root, the machine and command a result records, the CLI as run."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
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


def gqa(*args: str, check: bool = True) -> tuple[str, float]:
    """The CLI as a user runs it: stdout and seconds (exits with its error when `check`)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "gretriever_neo4j", *args], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    print(f"$ gqa {' '.join(args)}  ({seconds:.0f} s)", flush=True)
    if check and done.returncode != 0:
        sys.exit(f"gqa {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done.stdout, seconds
