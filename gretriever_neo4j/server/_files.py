"""Small file helpers the server modules share: write a file atomically, sha1 a jar, keep the end of some output.

They live apart so that the lock file, the configuration, the installer and process control can each use
them without importing one another.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(text)
    os.replace(partial, path)


def sha1_of(path: Path) -> str:
    digest = hashlib.sha1()
    with open(path, "rb") as source:
        while chunk := source.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def last_lines(text: str, lines: int) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
