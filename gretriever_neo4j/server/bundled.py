"""A private Neo4j 5.26 LTS Community server, assembled from Maven Central and run as a plain JVM.

Nothing here needs neo4j.com, Docker or a system package: the exact runtime jar set of
`org.neo4j:neo4j` (the server) and `org.neo4j.client:neo4j-browser` (the web UI) is pinned in
`neo4j_jars.lock` with sha1 sums, fetched once into a cache under `gqa_home()/neo4j/lib`, and
`org.neo4j.server.CommunityEntryPoint` is launched directly with the JVM flags of the official launcher.

Layout under `gqa_home()/neo4j` (GQA_HOME, default ~/.cache/gqa):

    lib/<version>-<lock digest>/   the jars (shared by every layout that points its jar cache here)
    home/conf/neo4j.conf           written by `configure`; 127.0.0.1 only, auth on, https off
    home/{data,logs,run,plugins,import}
    password                       generated once, mode 0600 (settings.py reads it as the default password)

The library prints nothing; `gqa db ...` and `python -m gretriever_neo4j.server.bundled ...` do the talking.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import fcntl
import hashlib
import http.client
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import string
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Sequence

from gretriever_neo4j.errors import ConfigError, DatabaseError, GqaError, InputError
from gretriever_neo4j.settings import gqa_home

LOCK_FILE_NAME = "neo4j_jars.lock"
SERVER_ARTIFACT = "org.neo4j:neo4j"
BROWSER_ARTIFACT = "org.neo4j.client:neo4j-browser"
DEFAULT_MAVEN_REPO = "https://repo1.maven.org/maven2"
SUPPORTED_JAVA_MAJORS = (17, 21)
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
ADMIN_TOOL = "org.neo4j.cli.AdminTool"
NEO4J_USER = "neo4j"
# Neo4j Browser's stylesheet for gqa's graphs, as the `:style` command that sets it (no ';': Browser splits
# post-connect commands there). Shared with docker-compose.yml and printed by `gqa show`.
BROWSER_STYLE_COMMAND = ("style node.Node {caption: '{text}'} relationship.REL {caption: '{text}'} "
                         "node.Retrieval {caption: '{question}'}")
MIN_PASSWORD_LENGTH = 8  # Neo4j's dbms.security.auth_minimum_password_length default

# Sized for a 24 GiB machine that also trains with PyTorch.
DEFAULT_HEAP = "2g"
DEFAULT_PAGECACHE = "2g"
INITIAL_HEAP_CAP = "512m"  # start small and let G1 grow: the rest of the machine belongs to PyTorch
TX_LOG_RETENTION = "1 days 512M"

# The flags of the official 5.x neo4j.conf template (server.jvm.additional), which our direct launch
# would otherwise lose. Left out on purpose: -XX:+AlwaysPreTouch, which commits the whole initial
# heap up front, the opposite of what a machine shared with PyTorch wants.
JVM_FLAGS = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "-XX:FlightRecorderOptions=stackdepth=256",
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:+DebugNonSafepoints",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true",
    "-Dlog4j.layout.jsonTemplate.maxStringLength=32768",
    "-Dfile.encoding=UTF-8",
)

ProgressCallback = Callable[[int, int, str], None]
"""Called after each jar lands: (jars done, jars in total, file name)."""


# --------------------------------------------------------------------------------------------------
# The lock file


@dataclass(frozen=True)
class LockedJar:
    group: str
    artifact: str
    version: str
    classifier: str | None
    sha1: str

    @property
    def coordinates(self) -> str:
        base = f"{self.group}:{self.artifact}:{self.version}"
        return f"{base}:{self.classifier}" if self.classifier else base

    @property
    def file_name(self) -> str:
        """The name `mvn dependency:copy-dependencies` gives it, so both install paths agree."""
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{suffix}.jar"

    def url(self, repository: str) -> str:
        return "/".join((repository.rstrip("/"), *self.group.split("."), self.artifact, self.version,
                         self.file_name))


@dataclass(frozen=True)
class JarLock:
    jars: tuple[LockedJar, ...]
    digest: str  # sha1 of the lock's jar lines: a changed lock installs into a fresh directory

    def version_of(self, group_artifact: str) -> str:
        for jar in self.jars:
            if f"{jar.group}:{jar.artifact}" == group_artifact:
                return jar.version
        raise ConfigError(f"{LOCK_FILE_NAME} does not pin {group_artifact}")

    @property
    def neo4j_version(self) -> str:
        return self.version_of(SERVER_ARTIFACT)

    @property
    def browser_version(self) -> str:
        return self.version_of(BROWSER_ARTIFACT)


_LOCK_LINE = re.compile(r"^(?P<coords>[^\s:]+:[^\s:]+:[^\s:]+(?::[^\s:]+)?)\s+(?P<sha1>\S+)$")
_SHA1 = re.compile(r"^[0-9a-f]{40}$")


def parse_lock(text: str, *, source: str | Path = LOCK_FILE_NAME) -> JarLock:
    """Parse `group:artifact:version[:classifier] sha1` lines; `#` starts a comment line."""
    jars: list[LockedJar] = []
    seen_files: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _LOCK_LINE.match(line)
        if match is None:
            raise InputError("expected 'group:artifact:version[:classifier] sha1'", source=source, line=number)
        sha1 = match["sha1"].lower()
        if not _SHA1.match(sha1):
            raise InputError(f"'{match['sha1']}' is not a 40-digit hex sha1", source=source, line=number)
        group, artifact, version, *classifier = match["coords"].split(":")
        jar = LockedJar(group, artifact, version, classifier[0] if classifier else None, sha1)
        if jar.file_name in seen_files:
            raise InputError(f"{jar.file_name} is already pinned on line {seen_files[jar.file_name]}",
                             source=source, line=number)
        seen_files[jar.file_name] = number
        jars.append(jar)
    canonical = "\n".join(f"{jar.coordinates} {jar.sha1}" for jar in jars)
    return JarLock(tuple(jars), hashlib.sha1(canonical.encode()).hexdigest())


@lru_cache(maxsize=1)
def packaged_lock() -> JarLock:
    resource = resources.files(__package__) / LOCK_FILE_NAME
    return parse_lock(resource.read_text(encoding="utf-8"), source=str(resource))


def format_lock(jars: Sequence[LockedJar], *, header: Sequence[str] = ()) -> str:
    lines = [f"# {line}" if line else "#" for line in header]
    lines += [f"{jar.coordinates} {jar.sha1}" for jar in sorted(jars, key=lambda j: j.coordinates)]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------
# Layout and configuration


@dataclass(frozen=True)
class ServerLayout:
    root: Path
    jar_cache: Path  # parent of the versioned jar directories; another layout may share it

    @classmethod
    def at(cls, root: str | Path, *, jar_cache: str | Path | None = None) -> "ServerLayout":
        root = Path(root).expanduser().absolute()
        return cls(root, Path(jar_cache).expanduser().absolute() if jar_cache else root / "lib")

    @classmethod
    def default(cls) -> "ServerLayout":
        return cls.at(gqa_home() / "neo4j")

    @property
    def lib_dir(self) -> Path:
        lock = packaged_lock()
        return self.jar_cache / f"{lock.neo4j_version}-{lock.digest[:8]}"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def conf_dir(self) -> Path:
        return self.home / "conf"

    @property
    def conf_file(self) -> Path:
        return self.conf_dir / "neo4j.conf"

    @property
    def data_dir(self) -> Path:
        return self.home / "data"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def run_dir(self) -> Path:
        return self.home / "run"

    @property
    def plugins_dir(self) -> Path:
        return self.home / "plugins"

    @property
    def import_dir(self) -> Path:
        return self.home / "import"

    @property
    def password_file(self) -> Path:
        return self.root / "password"

    @property
    def pid_file(self) -> Path:
        return self.run_dir / "gqa-neo4j.pid"

    @property
    def console_log(self) -> Path:
        return self.logs_dir / "console.log"

    @property
    def neo4j_log(self) -> Path:
        return self.logs_dir / "neo4j.log"

    @property
    def debug_log(self) -> Path:
        return self.logs_dir / "debug.log"

    @property
    def password_marker(self) -> Path:
        """Sits in the data directory because the initial password belongs to that database."""
        return self.data_dir / ".gqa-initial-password-set"

    def make_dirs(self) -> None:
        for directory in (self.conf_dir, self.data_dir, self.logs_dir, self.run_dir, self.plugins_dir,
                          self.import_dir):
            directory.mkdir(parents=True, exist_ok=True)


def default_layout() -> ServerLayout:
    """The layout `gqa db` manages: gqa_home()/neo4j."""
    return ServerLayout.default()


_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)\s*$", re.IGNORECASE)
_UNIT_BYTES = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(text: str, *, field: str) -> int:
    """'2g', '512m', '1024k' or plain bytes -> bytes; anything else names the field it came from."""
    match = _SIZE.match(str(text))
    if match is None or int(match[1]) == 0:
        raise ConfigError(f"{field}: '{text}' is not a memory size like 512m or 2g")
    return int(match[1]) * _UNIT_BYTES[match[2].lower()]


def normalise_size(text: str, *, field: str) -> str:
    match = _SIZE.match(str(text))
    parse_size(text, field=field)
    return f"{int(match[1])}{match[2].lower()}"


def _env_size(name: str) -> str | None:
    value = os.environ.get(name)
    return normalise_size(value, field=name) if value else None


@dataclass(frozen=True)
class ServerConfig:
    heap: str = DEFAULT_HEAP
    pagecache: str = DEFAULT_PAGECACHE
    bolt_port: int = 7687
    http_port: int = 7474

    def __post_init__(self) -> None:
        object.__setattr__(self, "heap", normalise_size(self.heap, field="heap"))
        object.__setattr__(self, "pagecache", normalise_size(self.pagecache, field="pagecache"))
        for name in ("bolt_port", "http_port"):
            port = getattr(self, name)
            if not isinstance(port, int) or not 0 < port < 65536:
                raise ConfigError(f"{name}: {port!r} is not a TCP port")
        if self.bolt_port == self.http_port:
            raise ConfigError(f"bolt_port and http_port are both {self.bolt_port}")

    @classmethod
    def resolve(cls, *, heap: str | None = None, pagecache: str | None = None,
                bolt_port: int = 7687, http_port: int = 7474) -> "ServerConfig":
        """Arguments win over GQA_NEO4J_HEAP / GQA_NEO4J_PAGECACHE, which win over the defaults."""
        return cls(
            heap=heap or _env_size("GQA_NEO4J_HEAP") or DEFAULT_HEAP,
            pagecache=pagecache or _env_size("GQA_NEO4J_PAGECACHE") or DEFAULT_PAGECACHE,
            bolt_port=bolt_port,
            http_port=http_port,
        )

    @property
    def initial_heap(self) -> str:
        if parse_size(self.heap, field="heap") <= parse_size(INITIAL_HEAP_CAP, field="heap"):
            return self.heap
        return INITIAL_HEAP_CAP

    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def browser_url(self) -> str:
        return f"{self.http_url}/browser/"


def render_conf(layout: ServerLayout, config: ServerConfig) -> str:
    settings = {
        "server.default_listen_address": "127.0.0.1",
        "server.default_advertised_address": "127.0.0.1",
        "server.bolt.enabled": "true",
        "server.bolt.listen_address": f"127.0.0.1:{config.bolt_port}",
        "server.http.enabled": "true",
        "server.http.listen_address": f"127.0.0.1:{config.http_port}",
        "server.https.enabled": "false",
        "dbms.security.auth_enabled": "true",
        "server.memory.heap.initial_size": config.initial_heap,
        "server.memory.heap.max_size": config.heap,
        "server.memory.pagecache.size": config.pagecache,
        "server.directories.data": str(layout.data_dir),
        "server.directories.logs": str(layout.logs_dir),
        "server.directories.run": str(layout.run_dir),
        "server.directories.plugins": str(layout.plugins_dir),
        "server.directories.import": str(layout.import_dir),
        "db.tx_log.rotation.retention_policy": TX_LOG_RETENTION,
        # The server would otherwise phone home; this machine has no business doing so.
        "dbms.usage_report.enabled": "false",
        # Browser captions nodes and edges with their text, not their label "Node" and type "REL".
        "browser.post_connect_cmd": BROWSER_STYLE_COMMAND,
        # Bolt's two netty loops each sit out a 5 s quiet period on shutdown, after every database is
        # already checkpointed and closed; 1 s makes `gqa db stop` take ~2 s instead of ~11 s.
        "internal.dbms.bolt.netty_server_shutdown_quiet_period": "1",
    }
    header = [
        "# Written by gretriever_neo4j.server.bundled.configure; `gqa db start` rewrites it when given",
        "# --heap/--pagecache/ports. JVM flags are passed by the launcher, not read from here.",
    ]
    return "\n".join(header + [f"{key}={value}" for key, value in settings.items()]) + "\n"


def write_config(layout: ServerLayout, config: ServerConfig) -> ServerConfig:
    layout.make_dirs()
    _atomic_write(layout.conf_file, render_conf(layout, config))
    return config


def configure(layout: ServerLayout | None = None, *, heap: str | None = None, pagecache: str | None = None,
              bolt_port: int = 7687, http_port: int = 7474) -> ServerConfig:
    layout = layout or ServerLayout.default()
    return write_config(layout, ServerConfig.resolve(heap=heap, pagecache=pagecache, bolt_port=bolt_port,
                                                     http_port=http_port))


def read_config(layout: ServerLayout) -> ServerConfig | None:
    """The config in force, read back from our neo4j.conf; None before the first `configure`."""
    try:
        text = layout.conf_file.read_text()
    except FileNotFoundError:
        return None
    values = dict(
        line.split("=", 1) for line in (raw.strip() for raw in text.splitlines())
        if line and not line.startswith("#") and "=" in line
    )

    def port(key: str, default: int) -> int:
        address = values.get(key, "")
        try:
            return int(address.rsplit(":", 1)[1])
        except (IndexError, ValueError):
            return default

    try:
        return ServerConfig(
            heap=values.get("server.memory.heap.max_size", DEFAULT_HEAP),
            pagecache=values.get("server.memory.pagecache.size", DEFAULT_PAGECACHE),
            bolt_port=port("server.bolt.listen_address", 7687),
            http_port=port("server.http.listen_address", 7474),
        )
    except ConfigError as error:
        raise ConfigError(f"{layout.conf_file}: {error}") from error


# --------------------------------------------------------------------------------------------------
# Install


@dataclass(frozen=True)
class InstallResult:
    lib_dir: Path
    method: str  # "cached", "download" or "maven"
    jar_count: int
    total_bytes: int
    seconds: float


_COMPLETE_MARKER = ".gqa-complete"


def is_installed(layout: ServerLayout) -> bool:
    marker = layout.lib_dir / _COMPLETE_MARKER
    try:
        return marker.read_text().strip() == packaged_lock().digest
    except OSError:
        return False


def install(layout: ServerLayout | None = None, progress: ProgressCallback | None = None, *,
            method: str = "auto") -> InstallResult:
    """Fetch the locked jar set once. method: "auto" (download, else mvn), "download" or "maven"."""
    layout = layout or ServerLayout.default()
    lock = packaged_lock()
    started = time.monotonic()
    if is_installed(layout):
        return InstallResult(layout.lib_dir, "cached", len(lock.jars), _dir_bytes(layout.lib_dir), 0.0)
    if method not in ("auto", "download", "maven"):
        raise ConfigError(f"install method: '{method}' is not auto, download or maven")
    layout.jar_cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{layout.lib_dir.name}.", dir=layout.jar_cache))
    try:
        used = _fill_staging(staging, lock, progress, method)
        (staging / _COMPLETE_MARKER).write_text(lock.digest + "\n")
        _move_into_place(staging, layout.lib_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return InstallResult(layout.lib_dir, used, len(lock.jars), _dir_bytes(layout.lib_dir),
                         time.monotonic() - started)


def _fill_staging(staging: Path, lock: JarLock, progress: ProgressCallback | None, method: str) -> str:
    repository = os.environ.get("GQA_MAVEN_REPO", DEFAULT_MAVEN_REPO)
    if method in ("auto", "download"):
        try:
            download_jars(lock.jars, staging, repository=repository, progress=progress)
            return "download"
        except DatabaseError as download_error:
            if method == "download" or shutil.which("mvn") is None:
                raise
            for partial in staging.iterdir():
                partial.unlink()
            try:
                _copy_with_maven(lock, staging)
            except DatabaseError as maven_error:
                raise DatabaseError(f"{download_error}; the mvn fallback failed too: {maven_error}") from maven_error
            return "maven"
    if shutil.which("mvn") is None:
        raise DatabaseError("cannot install Neo4j with Maven: no `mvn` on PATH")
    _copy_with_maven(lock, staging)
    return "maven"


def _move_into_place(staging: Path, target: Path) -> None:
    if target.exists() and not (target / _COMPLETE_MARKER).exists():
        shutil.rmtree(target)  # a leftover from an interrupted install of an older layout
    try:
        os.replace(staging, target)
    except OSError:
        # Another process finished the same install first; its copy is as good as ours.
        if not (target / _COMPLETE_MARKER).exists():
            raise


def download_jars(jars: Sequence[LockedJar], destination: Path, *, repository: str = DEFAULT_MAVEN_REPO,
                  progress: ProgressCallback | None = None, workers: int = 8) -> None:
    """Download and sha1-check every jar into `destination`, `workers` at a time."""
    with _Connections() as connections, concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(_download_one, jar, destination, repository, connections): jar for jar in jars}
        try:
            for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
                future.result()
                if progress is not None:
                    progress(done, len(jars), futures[future].file_name)
        except BaseException:
            for future in futures:
                future.cancel()
            raise


class _Connections:
    """One kept-alive HTTP(S) connection per worker thread and host.

    A fresh connection per jar costs a DNS lookup and a TLS handshake each; measured here, 214 jars
    took 17-23 s that way (parallel lookups stalled for 5 s at a time) against under 1 s kept alive.
    """

    def __init__(self) -> None:
        self._local = threading.local()
        self._opened: list[http.client.HTTPConnection] = []
        self._guard = threading.Lock()
        self._use_proxy = bool(urllib.request.getproxies())

    def __enter__(self) -> "_Connections":
        return self

    def __exit__(self, *exc_info: object) -> None:
        with self._guard:
            for connection in self._opened:
                connection.close()
            self._opened.clear()

    @contextmanager
    def get(self, url: str, redirects: int = 5) -> Iterator[BinaryIO]:
        """Yield the body of a 200 answer to GET url; anything else raises _HttpStatus or OSError."""
        if self._use_proxy:  # http.client knows nothing of proxies; urllib does
            request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
            with urllib.request.urlopen(request, timeout=60) as response:
                yield response
            return
        parts = urllib.parse.urlsplit(url)
        connection = self._connection(parts.scheme, parts.netloc)
        try:
            connection.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""),
                               headers={"User-Agent": _USER_AGENT})
            response = connection.getresponse()
        except (http.client.HTTPException, OSError):
            self._discard(parts.scheme, parts.netloc)
            raise
        if response.status in (301, 302, 303, 307, 308) and redirects > 0 and response.getheader("Location"):
            response.read()
            with self.get(urllib.parse.urljoin(url, response.getheader("Location")), redirects - 1) as body:
                yield body
            return
        if response.status != 200:
            response.read()
            raise _HttpStatus(response.status, response.reason)
        try:
            yield response
        except BaseException:
            self._discard(parts.scheme, parts.netloc)  # an unread body leaves the connection unusable
            raise

    def _connection(self, scheme: str, netloc: str) -> http.client.HTTPConnection:
        pool = self._local.__dict__.setdefault("pool", {})
        if (scheme, netloc) not in pool:
            kinds = {"https": http.client.HTTPSConnection, "http": http.client.HTTPConnection}
            if scheme not in kinds:
                raise ConfigError(f"GQA_MAVEN_REPO: '{scheme}' is not http or https")
            pool[scheme, netloc] = kinds[scheme](netloc, timeout=60)
            with self._guard:
                self._opened.append(pool[scheme, netloc])
        return pool[scheme, netloc]

    def _discard(self, scheme: str, netloc: str) -> None:
        connection = self._local.__dict__.get("pool", {}).pop((scheme, netloc), None)
        if connection is not None:
            connection.close()


class _HttpStatus(Exception):
    def __init__(self, status: int, reason: str):
        super().__init__(f"HTTP {status} {reason}")
        self.status = status


_USER_AGENT = "gqa-neo4j-installer"


def _download_one(jar: LockedJar, destination: Path, repository: str, connections: _Connections,
                  attempts: int = 3) -> None:
    url = jar.url(repository)
    target = destination / jar.file_name
    partial = target.with_name(target.name + ".part")
    last_error: Exception | None = None
    for attempt in range(attempts):
        try:
            digest = hashlib.sha1()
            with connections.get(url) as body, open(partial, "wb") as sink:
                while chunk := body.read(1 << 16):
                    digest.update(chunk)
                    sink.write(chunk)
            if digest.hexdigest() != jar.sha1:
                raise DatabaseError(f"{url}: sha1 {digest.hexdigest()} does not match the locked {jar.sha1}")
            os.replace(partial, target)
            return
        except _HttpStatus as error:
            last_error = error
            if error.status < 500:
                break  # a missing jar does not appear by asking again
        except (http.client.HTTPException, urllib.error.URLError, OSError) as error:
            last_error = error
        time.sleep(0.5 * (attempt + 1))
    raise DatabaseError(f"cannot download {url}: {last_error}")


def _pom(lock: JarLock) -> str:
    dependencies = []
    for group_artifact in (SERVER_ARTIFACT, BROWSER_ARTIFACT):
        group, artifact = group_artifact.split(":")
        dependencies.append(
            f"    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{lock.version_of(group_artifact)}</version></dependency>"
        )
    return "\n".join([
        '<project xmlns="http://maven.apache.org/POM/4.0.0">',
        "  <modelVersion>4.0.0</modelVersion>",
        "  <groupId>gqa</groupId><artifactId>neo4j-server-assembly</artifactId><version>1</version>",
        "  <packaging>pom</packaging>",
        "  <dependencies>", *dependencies, "  </dependencies>",
        "</project>", "",
    ])


def _copy_with_maven(lock: JarLock, destination: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="gqa-neo4j-pom-") as workdir:
        Path(workdir, "pom.xml").write_text(_pom(lock))
        command = ["mvn", "-q", "-B", "dependency:copy-dependencies", f"-DoutputDirectory={destination}",
                   "-DincludeScope=runtime"]
        result = subprocess.run(command, cwd=workdir, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise DatabaseError(f"`{' '.join(command)}` failed: {_last_lines(result.stdout + result.stderr, 15)}")
    verify_jar_set(lock, destination)


def verify_jar_set(lock: JarLock, directory: Path) -> None:
    """The directory must hold exactly the locked jars, each with its locked sha1."""
    expected = {jar.file_name: jar.sha1 for jar in lock.jars}
    present = {path.name for path in directory.glob("*.jar")}
    problems = [f"missing {name}" for name in sorted(expected.keys() - present)]
    problems += [f"unexpected {name}" for name in sorted(present - expected.keys())]
    for name in sorted(expected.keys() & present):
        actual = _sha1_of(directory / name)
        if actual != expected[name]:
            problems.append(f"{name} has sha1 {actual}, locked {expected[name]}")
    if problems:
        raise DatabaseError(f"{directory} does not match {LOCK_FILE_NAME}: " + "; ".join(problems[:10]))


def resolve_lock_with_maven(neo4j_version: str, browser_version: str) -> list[LockedJar]:
    """Ask Maven for the runtime closure of server + browser, and sha1 the jars it resolved."""
    placeholder = JarLock((
        LockedJar(*SERVER_ARTIFACT.split(":"), neo4j_version, None, "0" * 40),
        LockedJar(*BROWSER_ARTIFACT.split(":"), browser_version, None, "0" * 40),
    ), "")
    with tempfile.TemporaryDirectory(prefix="gqa-neo4j-lock-") as workdir:
        Path(workdir, "pom.xml").write_text(_pom(placeholder))
        listing = Path(workdir, "dependencies.txt")
        command = ["mvn", "-q", "-B", "dependency:list", "-DincludeScope=runtime",
                   "-DoutputAbsoluteArtifactFilename=true", f"-DoutputFile={listing}"]
        result = subprocess.run(command, cwd=workdir, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise DatabaseError(f"`{' '.join(command)}` failed: {_last_lines(result.stdout + result.stderr, 15)}")
        return [jar for jar in map(_jar_from_listing_line, listing.read_text().splitlines()) if jar]


def _jar_from_listing_line(line: str) -> LockedJar | None:
    """`group:artifact:jar[:classifier]:version:scope:/abs/path.jar` -> LockedJar (None for prose lines)."""
    fields = line.split(" -- ", 1)[0].strip().split(":")
    if len(fields) not in (6, 7):
        return None
    group, artifact, kind = fields[:3]
    classifier = fields[3] if len(fields) == 7 else None
    version, path = fields[-3], Path(fields[-1])
    if kind != "jar":
        raise DatabaseError(f"{group}:{artifact} resolved to a '{kind}', not a jar")
    sha1 = _sha1_of(path)
    published = path.with_name(path.name + ".sha1")
    if published.exists() and published.read_text().split()[0].lower() != sha1:
        raise DatabaseError(f"{path} does not match its published {published.name}")
    return LockedJar(group, artifact, version, classifier, sha1)


# --------------------------------------------------------------------------------------------------
# Java and the initial password


@dataclass(frozen=True)
class JavaRuntime:
    executable: Path
    major: int


_JAVA_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')


def find_java() -> JavaRuntime:
    """JAVA_HOME's java, else the one on PATH; Neo4j 5.26 runs on Java 17 or 21 only."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        executable = Path(java_home) / "bin" / "java"
        origin = f"JAVA_HOME={java_home}"
    else:
        found = shutil.which("java")
        if found is None:
            raise ConfigError("Neo4j needs Java 17 or 21 and no `java` is on PATH (or set JAVA_HOME); "
                              "on Debian: apt-get install openjdk-17-jre-headless")
        executable, origin = Path(found), "the `java` on PATH"
    try:
        result = subprocess.run([str(executable), "-version"], capture_output=True, text=True, timeout=30,
                                stdin=subprocess.DEVNULL)
    except OSError as error:
        raise ConfigError(f"cannot run {executable} ({origin}): {error}") from error
    match = _JAVA_VERSION.search(result.stderr + result.stdout)
    if match is None:
        raise ConfigError(f"cannot tell the version of {executable} ({origin})")
    major = int(match[2]) if match[1] == "1" else int(match[1])
    if major not in SUPPORTED_JAVA_MAJORS:
        hint = ", ".join(str(path) for path in _jdk_candidates()) or "none found under /usr/lib/jvm"
        raise ConfigError(f"{executable} ({origin}) is Java {major}; Neo4j 5.26 needs Java 17 or 21. "
                          f"Point JAVA_HOME at one (candidates: {hint})")
    return JavaRuntime(executable, major)


def _jdk_candidates() -> list[Path]:
    jvm_root = Path("/usr/lib/jvm")
    if not jvm_root.is_dir():
        return []
    return sorted(path for path in jvm_root.iterdir()
                  if re.search(r"(^|-)(17|21)(-|\.|$)", path.name) and (path / "bin" / "java").exists())


def ensure_password(layout: ServerLayout | None = None) -> str:
    """NEO4J_PASSWORD if set, else the generated one in `password` (0600); set as initial password once."""
    layout = layout or ServerLayout.default()
    password = os.environ.get("NEO4J_PASSWORD") or _stored_or_new_password(layout)
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ConfigError(f"NEO4J_PASSWORD: Neo4j needs at least {MIN_PASSWORD_LENGTH} characters")
    if not layout.password_marker.exists():
        _set_initial_password(layout, password)
    return password


def _stored_or_new_password(layout: ServerLayout) -> str:
    try:
        stored = layout.password_file.read_text().strip()
    except FileNotFoundError:
        stored = ""
    if stored:
        return stored
    # neo4j-admin reads a leading "-" as an option; a letter first keeps every generated password usable.
    password = secrets.choice(string.ascii_letters) + secrets.token_urlsafe(18)
    layout.root.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(layout.password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as sink:
        sink.write(password + "\n")
    os.chmod(layout.password_file, 0o600)  # O_CREAT's mode does not fix an existing file
    return password


def _set_initial_password(layout: ServerLayout, password: str) -> None:
    install(layout)
    if read_config(layout) is None:
        configure(layout)
    java = find_java()
    command = [str(java.executable), "-Xmx512m", "-cp", _classpath(layout), ADMIN_TOOL,
               "dbms", "set-initial-password", "--", password]  # "--": a password may begin with "-"
    env = {**_server_env(), "NEO4J_HOME": str(layout.home), "NEO4J_CONF": str(layout.conf_dir)}
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120,
                            stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).replace(password, "********")
        raise DatabaseError(f"neo4j-admin set-initial-password failed: {_last_lines(output, 10)}")
    layout.password_marker.write_text("initial password set by gqa\n")


# --------------------------------------------------------------------------------------------------
# Process control


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


# Children launched by this Python process: polling them reaps them, so a stopped server
# does not linger as a zombie that still "exists" for os.kill(pid, 0).
_launched: dict[int, subprocess.Popen] = {}


def status(layout: ServerLayout | None = None) -> ServerStatus:
    layout = layout or ServerLayout.default()
    config = read_config(layout) or ServerConfig.resolve()
    pid = _running_pid(layout)
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
          config: ServerConfig | None = None, progress: ProgressCallback | None = None) -> ServerStatus:
    """Install, configure and launch the server, then wait until Bolt accepts our password.

    Settings, first that is given wins: the keyword arguments; `config`; GQA_NEO4J_HEAP and
    GQA_NEO4J_PAGECACHE; what the last start used (neo4j.conf); the defaults.
    A server that is already running is left alone and its status returned as it is.
    """
    layout = layout or ServerLayout.default()
    layout.make_dirs()
    with _exclusive(layout):
        if _running_pid(layout) is not None:
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
    from_env = {} if config else {"heap": _env_size("GQA_NEO4J_HEAP"),
                                  "pagecache": _env_size("GQA_NEO4J_PAGECACHE")}
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
    with _exclusive(layout):
        pid = _running_pid(layout)
        if pid is not None:
            _terminate(pid, timeout)
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


def _classpath(layout: ServerLayout) -> str:
    return os.pathsep.join((f"{layout.plugins_dir}/*", f"{layout.conf_dir}/*", f"{layout.lib_dir}/*"))


def _server_env() -> dict[str, str]:
    """The secret stays out of the JVM's environment: it only needs it once, via AdminTool."""
    return {key: value for key, value in os.environ.items() if key != "NEO4J_PASSWORD"}


def server_command(layout: ServerLayout, config: ServerConfig, java: JavaRuntime) -> list[str]:
    return [str(java.executable), f"-Xms{config.initial_heap}", f"-Xmx{config.heap}", *JVM_FLAGS,
            "-cp", _classpath(layout), ENTRY_POINT, f"--home-dir={layout.home}", f"--config-dir={layout.conf_dir}"]


def _launch(layout: ServerLayout, config: ServerConfig, java: JavaRuntime) -> subprocess.Popen:
    with open(layout.console_log, "ab") as console:
        console.write(f"\n---- gqa: starting Neo4j {packaged_lock().neo4j_version} at {time.ctime()} ----\n"
                      .encode())
        console.flush()
        process = subprocess.Popen(server_command(layout, config, java), cwd=layout.home, env=_server_env(),
                                   stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    _launched[process.pid] = process
    _atomic_write(layout.pid_file, f"{process.pid}\n")
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
            _terminate(process.pid, 30)
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


def _running_pid(layout: ServerLayout) -> int | None:
    try:
        pid = int(layout.pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    return pid if _is_our_server(pid, layout) else None


def _is_our_server(pid: int, layout: ServerLayout) -> bool:
    child = _launched.get(pid)
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


def _terminate(pid: int, timeout: float) -> None:
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
    child = _launched.get(pid)
    if child is not None:
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        _launched.pop(pid, None)
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
def _exclusive(layout: ServerLayout) -> Iterator[None]:
    """One start/stop at a time per layout, across processes."""
    with open(layout.run_dir / "gqa.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# --------------------------------------------------------------------------------------------------
# Small helpers


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(text)
    os.replace(partial, path)


def _sha1_of(path: Path) -> str:
    digest = hashlib.sha1()
    with open(path, "rb") as source:
        while chunk := source.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _dir_bytes(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.glob("*.jar"))


def _tail(path: Path, lines: int) -> str:
    with open(path, "rb") as source:
        source.seek(0, os.SEEK_END)
        source.seek(max(0, source.tell() - 64 * 1024))
        text = source.read().decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def _last_lines(text: str, lines: int) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


# --------------------------------------------------------------------------------------------------
# `python -m gretriever_neo4j.server.bundled ...`: enough for CI before the `gqa db` CLI exists


def format_status(state: ServerStatus) -> str:
    rows = [
        ("running", f"yes (pid {state.pid})" if state.running else "no"),
        ("version", f"Neo4j {state.version} Community" + ("" if state.installed else " (not installed)")),
        ("bolt", state.bolt_uri),
        ("browser", state.browser_url),
        ("data", str(state.data_dir)),
        ("heap", state.heap),
        ("page cache", state.pagecache),
    ]
    return "\n".join(f"{name:<11}{value}" for name, value in rows)


def _print_progress(done: int, total: int, name: str) -> None:
    if done == total or done % 25 == 0:
        print(f"  {done}/{total} jars ({name})", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gretriever_neo4j.server.bundled",
                                     description="Run the local Neo4j server that gqa manages.")
    commands = parser.add_subparsers(dest="command", required=True)
    start_parser = commands.add_parser("start", help="install if needed, start, wait until Bolt answers")
    start_parser.add_argument("--heap")
    start_parser.add_argument("--pagecache")
    start_parser.add_argument("--bolt-port", type=int)
    start_parser.add_argument("--http-port", type=int)
    start_parser.add_argument("--timeout", type=float, default=120)
    commands.add_parser("stop", help="stop the server (clean shutdown)")
    commands.add_parser("status", help="show whether it runs and where")
    install_parser = commands.add_parser("install", help="fetch the locked jars into the cache")
    install_parser.add_argument("--method", choices=("auto", "download", "maven"), default="auto")
    logs_parser = commands.add_parser("logs", help="show the end of the server logs")
    logs_parser.add_argument("--lines", type=int, default=40)
    lock_parser = commands.add_parser("lock", help="re-resolve the jar set with mvn and write the lock file")
    lock_parser.add_argument("--neo4j", required=True, help="org.neo4j:neo4j version, e.g. 5.26.30")
    lock_parser.add_argument("--browser", required=True, help="org.neo4j.client:neo4j-browser version")
    lock_parser.add_argument("--output", type=Path, default=Path(__file__).with_name(LOCK_FILE_NAME))
    arguments = parser.parse_args(argv)
    layout = ServerLayout.default()
    try:
        if arguments.command == "start":
            began = time.monotonic()
            state = start(layout, timeout=arguments.timeout, heap=arguments.heap, pagecache=arguments.pagecache,
                          bolt_port=arguments.bolt_port, http_port=arguments.http_port, progress=_print_progress)
            print(format_status(state))
            print(f"ready in {time.monotonic() - began:.1f} s")
        elif arguments.command == "stop":
            print(format_status(stop(layout)))
        elif arguments.command == "status":
            print(format_status(status(layout)))
        elif arguments.command == "install":
            result = install(layout, _print_progress, method=arguments.method)
            print(f"{result.jar_count} jars, {result.total_bytes / 1e6:.0f} MB in {result.lib_dir} "
                  f"({result.method}, {result.seconds:.1f} s)")
        elif arguments.command == "logs":
            print(tail_logs(layout, arguments.lines))
        elif arguments.command == "lock":
            jars = resolve_lock_with_maven(arguments.neo4j, arguments.browser)
            header = [
                f"Neo4j {arguments.neo4j} Community server + Neo4j Browser {arguments.browser}: the exact runtime",
                "jar set (mvn dependency:list, scope runtime), fetched from Maven Central and sha1-checked.",
                "Regenerate: python -m gretriever_neo4j.server.bundled lock "
                f"--neo4j {arguments.neo4j} --browser {arguments.browser}",
                "Format: group:artifact:version[:classifier] sha1",
            ]
            arguments.output.write_text(format_lock(jars, header=header))
            print(f"wrote {len(jars)} jars to {arguments.output}")
    except GqaError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
