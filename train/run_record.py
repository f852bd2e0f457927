"""What a `python -m train.…` measurement records beside its figures: the command that reproduces it and the
machine it ran on (the bench scripts' `bench/_common.py` records the same for theirs)."""

from __future__ import annotations

import os
import platform
import sys


def run_record(module: str, argv: list[str] | None) -> dict:
    """{"command": "python -m train.<module> ARGS", "machine": {platform, cpus}}; `argv` as `main` was given it
    (None: this process's command line)."""
    args = argv if argv is not None else sys.argv[1:]
    return {"command": " ".join([f"python -m train.{module}", *args]),
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count()}}
