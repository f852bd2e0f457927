"""Which process is our server, and ending it: the pid file checked against /proc, SIGTERM then SIGKILL, and a lock.

A pid in the pid file is only trusted when that process still runs the server's entry point for this layout
(pids are reused); children launched by this Python process are polled instead, which also reaps them.
`exclusive` serialises start and stop of one layout across processes.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gretriever_neo4j.server.java import ENTRY_POINT
from gretriever_neo4j.server.layout import ServerLayout

# Children launched by this Python process: polling them reaps them, so a stopped server
# does not linger as a zombie that still "exists" for os.kill(pid, 0).
launched: dict[int, subprocess.Popen] = {}


def running_pid(layout: ServerLayout) -> int | None:
    try:
        pid = int(layout.pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    return pid if _is_our_server(pid, layout) else None


def _is_our_server(pid: int, layout: ServerLayout) -> bool:
    child = launched.get(pid)
    if child is not None:
        return child.poll() is None
    proc = Path("/proc") / str(pid)
    if proc.is_dir():
        try:
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            arguments = (proc / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError):
            return False
        # The pid may have been reused by an unrelated process since the file was written.
        return state != "Z" and ENTRY_POINT.encode() in arguments \
            and f"--home-dir={layout.home}".encode() in arguments
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def terminate(pid: int, timeout: float) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if _wait_for_exit(pid, timeout):
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    _wait_for_exit(pid, 10)


def _wait_for_exit(pid: int, timeout: float) -> bool:
    child = launched.get(pid)
    if child is not None:
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        launched.pop(pid, None)
        return True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _pid_exists(pid):
            return True
        time.sleep(0.2)
    return not _pid_exists(pid)


def _pid_exists(pid: int) -> bool:
    stat = Path("/proc") / str(pid) / "stat"
    if stat.parent.is_dir():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


@contextmanager
def exclusive(layout: ServerLayout) -> Iterator[None]:
    """One start/stop at a time per layout, across processes."""
    with open(layout.run_dir / "gqa.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
