"""Process control of the bundled server: `status`, `start`, `stop` and `tail_logs`.

`start` installs, configures, sets the password, launches the JVM and waits until Bolt accepts that
password (and the Browser's HTTP port answers); a server already running is left alone. The library prints
nothing; `gqa db ...` and `python -m gretriever_neo4j.server ...` do the talking.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from gretriever_neo4j.errors import DatabaseError
from gretriever_neo4j.progress import OnProgress
from gretriever_neo4j.server._files import atomic_write
from gretriever_neo4j.server.conf import (
    ServerConfig,
    env_size,
    read_config,
    write_config,
)
from gretriever_neo4j.server.download import install, is_installed
from gretriever_neo4j.server.java import (
    JavaRuntime,
    find_java,
    server_command,
    server_env,
)
from gretriever_neo4j.server.layout import ServerLayout
from gretriever_neo4j.server.lockfile import packaged_lock
from gretriever_neo4j.server.password import NEO4J_USER, ensure_password
from gretriever_neo4j.server.pids import exclusive, launched, running_pid, terminate


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    pid: int | None
    version: str
    installed: bool
    bolt_uri: str
    http_url: str
    browser_url: str
    data_dir: Path
    heap: str
    pagecache: str
    home: Path


def status(layout: ServerLayout | None = None) -> ServerStatus:
    layout = layout or ServerLayout.default()
    config = read_config(layout) or ServerConfig.resolve()
    pid = running_pid(layout)
    return ServerStatus(
        running=pid is not None,
        pid=pid,
        version=packaged_lock().neo4j_version,
        installed=is_installed(layout),
        bolt_uri=config.bolt_uri,
        http_url=config.http_url,
        browser_url=config.browser_url,
        data_dir=layout.data_dir,
        heap=config.heap,
        pagecache=config.pagecache,
        home=layout.root,
    )


def start(layout: ServerLayout | None = None, *, timeout: float = 120, heap: str | None = None,
          pagecache: str | None = None, bolt_port: int | None = None, http_port: int | None = None,
          config: ServerConfig | None = None, progress: OnProgress | None = None) -> ServerStatus:
    """Install, configure and launch the server, then wait until Bolt accepts our password.

    Settings, first that is given wins: the keyword arguments; `config`; GQA_NEO4J_HEAP and
    GQA_NEO4J_PAGECACHE; what the last start used (neo4j.conf); the defaults.
    A server that is already running is left alone and its status returned as it is.
    """
    layout = layout or ServerLayout.default()
    layout.make_dirs()
    with exclusive(layout):
        if running_pid(layout) is not None:
            return status(layout)
        # Re-rendered on every start so a newer gqa's settings reach an older install.
        config = write_config(layout, _effective_config(layout, config, heap=heap, pagecache=pagecache,
                                                        bolt_port=bolt_port, http_port=http_port))
        _require_free_ports(config)
        install(layout, progress)
        password = ensure_password(layout)
        java = find_java()
        process = _launch(layout, config, java)
        _wait_until_ready(layout, config, process, password, timeout)
        return status(layout)


def _effective_config(layout: ServerLayout, config: ServerConfig | None, *, heap: str | None,
                      pagecache: str | None, bolt_port: int | None, http_port: int | None) -> ServerConfig:
    base = config or read_config(layout) or ServerConfig()
    from_env = {} if config else {"heap": env_size("GQA_NEO4J_HEAP"),
                                  "pagecache": env_size("GQA_NEO4J_PAGECACHE")}
    return ServerConfig(
        heap=heap or from_env.get("heap") or base.heap,
        pagecache=pagecache or from_env.get("pagecache") or base.pagecache,
        bolt_port=bolt_port or base.bolt_port,
        http_port=http_port or base.http_port,
    )


def stop(layout: ServerLayout | None = None, timeout: float = 60) -> ServerStatus:
    """SIGTERM (Neo4j shuts down cleanly on it), SIGKILL after `timeout`; a stopped server is fine."""
    layout = layout or ServerLayout.default()
    layout.make_dirs()
    with exclusive(layout):
        pid = running_pid(layout)
        if pid is not None:
            terminate(pid, timeout)
        layout.pid_file.unlink(missing_ok=True)
        return status(layout)


def tail_logs(layout: ServerLayout | None = None, lines: int = 40) -> str:
    """The last lines of console.log and neo4j.log, each under its own header."""
    layout = layout or ServerLayout.default()
    sections = []
    for path in (layout.console_log, layout.neo4j_log):
        if path.exists():
            sections.append(f"==> {path} <==\n{_tail(path, lines)}")
    return "\n".join(sections) if sections else f"no logs yet under {layout.logs_dir}"


def _launch(layout: ServerLayout, config: ServerConfig, java: JavaRuntime) -> subprocess.Popen:
    with open(layout.console_log, "ab") as console:
        console.write(f"\n---- gqa: starting Neo4j {packaged_lock().neo4j_version} at {time.ctime()} ----\n"
                      .encode())
        console.flush()
        process = subprocess.Popen(server_command(layout, config, java), cwd=layout.home, env=server_env(),
                                   stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    launched[process.pid] = process
    atomic_write(layout.pid_file, f"{process.pid}\n")
    return process


def _wait_until_ready(layout: ServerLayout, config: ServerConfig, process: subprocess.Popen, password: str,
                      timeout: float) -> None:
    import neo4j  # imported late: status/stop/install work without the driver
    from neo4j.exceptions import AuthError, ServiceUnavailable

    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            layout.pid_file.unlink(missing_ok=True)
            raise DatabaseError(f"Neo4j exited with code {process.returncode} while starting.\n"
                                + tail_logs(layout, 25))
        if _port_answers(config.bolt_port):
            try:
                with neo4j.GraphDatabase.driver(config.bolt_uri, auth=(NEO4J_USER, password)) as driver:
                    driver.verify_connectivity()
                # The Browser's HTTP connector opens a moment after Bolt; callers print its URL next.
                while not _http_answers(config.http_url) and time.monotonic() < deadline:
                    time.sleep(0.2)
                return
            except AuthError as error:
                raise DatabaseError(
                    f"Neo4j is running at {config.bolt_uri} but refused the password ({error.message}). "
                    f"Its database under {layout.data_dir} was initialised with another password: set "
                    "NEO4J_PASSWORD to that one, or stop the server and delete the data directory."
                ) from error
            except ServiceUnavailable:
                pass  # Bolt is bound but databases are still coming up
        if time.monotonic() > deadline:
            terminate(process.pid, 30)
            layout.pid_file.unlink(missing_ok=True)
            raise DatabaseError(f"Neo4j did not answer on {config.bolt_uri} within {timeout:.0f} s; stopped it.\n"
                                + tail_logs(layout, 25))
        time.sleep(0.5)


def _port_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _http_answers(url: str) -> bool:
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # our own loopback server
    try:
        with direct.open(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _require_free_ports(config: ServerConfig) -> None:
    for name, port in (("Bolt", config.bolt_port), ("HTTP", config.http_port)):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            # SO_REUSEADDR: a port left in TIME_WAIT by our last server is free for the next one.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", port))
            except OSError as error:
                raise DatabaseError(
                    f"{name} port 127.0.0.1:{port} is already in use by another process ({error.strerror}); "
                    "stop it (another Neo4j? `docker compose down`?) or choose other ports"
                ) from error


def _tail(path: Path, lines: int) -> str:
    with open(path, "rb") as source:
        source.seek(0, os.SEEK_END)
        source.seek(max(0, source.tell() - 64 * 1024))
        text = source.read().decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])
