"""Whether what a long-running process loaded from a graph's models is still what is on disk.

`gqa serve` keeps readers and retrievers loaded; a `gqa train --graph G` run meanwhile rewrites
`GQA_HOME/models/G/` and writes its manifest last (`artifacts.registry`), atomically, as a new file. A stat of the
manifest (`manifest_stamp`) therefore says, for the price of one system call, whether anything trained for the
graph changed since the process loaded it; a checkpoint named directly is stamped the same way (`file_stamp`).
`trained_stamps` is what `/ready` reports: every graph's manifest `created` stamp.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from gretriever_neo4j.artifacts.registry import MANIFEST, models_dir
from gretriever_neo4j.settings import gqa_home

Stamp = tuple[int, int, int]  # (mtime in ns, inode, size): a file replaced or rewritten gets another one

_seen: dict[Path, tuple[Stamp, str, str]] = {}  # manifest -> (its stamp, graph, created) as last read
_seen_lock = threading.Lock()


def file_stamp(path: str | Path | None) -> Stamp | None:
    """The file's stamp, None when there is no such file."""
    if path is None:
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_ino, stat.st_size


def manifest_stamp(graph: str) -> Stamp | None:
    """The stamp of the graph's models manifest, None when nothing is trained for it."""
    return file_stamp(models_dir(graph) / MANIFEST)


def trained_stamps() -> dict[str, str]:
    """graph -> its models' `created` stamp (the manifest's time of writing where it names none), for every graph
    something is trained for in GQA_HOME. A manifest is read again only when its stamp changed."""
    root = gqa_home() / "models"
    try:
        folders = sorted(entry for entry in root.iterdir() if entry.is_dir())
    except OSError:
        return {}
    found: dict[str, str] = {}
    for folder in folders:
        path = folder / MANIFEST
        stamp = file_stamp(path)
        if stamp is None:
            continue
        with _seen_lock:
            known = _seen.get(path)
        if known is None or known[0] != stamp:
            try:
                data = json.loads(path.read_text())
                graph, created = str(data["graph"]), str(data.get("created") or "")
            except (OSError, ValueError, KeyError, TypeError):
                continue  # being replaced, or not a manifest: `load_trained` says what is wrong where it matters
            created = created or time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(stamp[0] / 1e9))
            known = (stamp, graph, created)
            with _seen_lock:
                _seen[path] = known
        found[known[1]] = known[2]
    return found
