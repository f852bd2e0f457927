"""Installing the jar set: download every locked jar from a Maven repository (sha1-checked), or fall back to `mvn`.

`install` fills a staging directory and moves it into place in one rename, so a half-finished install is
never taken for a complete one and two processes installing at once both end with the same jars. The
downloads share kept-alive HTTP(S) connections, one per worker thread and host (see `_Connections`).
GQA_MAVEN_REPO points at a mirror.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import http.client
import os
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from gretriever_neo4j.errors import ConfigError, DatabaseError
from gretriever_neo4j.progress import OnProgress, notify
from gretriever_neo4j.server.layout import ServerLayout
from gretriever_neo4j.server.lockfile import JarLock, LockedJar, packaged_lock
from gretriever_neo4j.server.maven import copy_with_maven

DEFAULT_MAVEN_REPO = "https://repo1.maven.org/maven2"


"""Called after each jar lands: (jars done, jars in total, file name)."""


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


def install(layout: ServerLayout | None = None, progress: OnProgress | None = None, *,
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


def _fill_staging(staging: Path, lock: JarLock, progress: OnProgress | None, method: str) -> str:
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
                copy_with_maven(lock, staging)
            except DatabaseError as maven_error:
                raise DatabaseError(f"{download_error}; the mvn fallback failed too: {maven_error}") from maven_error
            return "maven"
    if shutil.which("mvn") is None:
        raise DatabaseError("cannot install Neo4j with Maven: no `mvn` on PATH")
    copy_with_maven(lock, staging)
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
                  progress: OnProgress | None = None, workers: int = 8) -> None:
    """Download and sha1-check every jar into `destination`, `workers` at a time."""
    with _Connections() as connections, concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(_download_one, jar, destination, repository, connections): jar for jar in jars}
        try:
            for done, future in enumerate(concurrent.futures.as_completed(futures), start=1):
                future.result()
                notify(progress, "download", done, len(jars), jar=futures[future].file_name)
        except BaseException:
            for future in futures:
                future.cancel()
            raise


class _Connections:
    """One kept-alive HTTP(S) connection per worker thread and host.

    A fresh connection per jar costs a DNS lookup and a TLS handshake each, and parallel lookups can stall for
    seconds at a time; kept alive, the server's couple of hundred jars download in about a second.
    """

    def __init__(self) -> None:
        self._local = threading.local()
        self._opened: list[http.client.HTTPConnection] = []
        self._guard = threading.Lock()
        self._use_proxy = bool(urllib.request.getproxies())

    def __enter__(self) -> _Connections:
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


def _dir_bytes(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.glob("*.jar"))
