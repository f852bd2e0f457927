"""The lock file `neo4j_jars.lock`: the exact runtime jar set of the server and the Browser, each with its sha1.

The lock is what makes the bundled server reproducible without neo4j.com: it names every jar (Maven
coordinates) and the sha1 it must have, and its digest names the directory the jars are installed into, so
a changed lock installs afresh. This module parses and formats the lock and checks a directory against it;
`maven.py` regenerates it, `download.py` fetches what it pins.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from gretriever_neo4j.errors import ConfigError, DatabaseError, InputError
from gretriever_neo4j.server._files import sha1_of

LOCK_FILE_NAME = "neo4j_jars.lock"
SERVER_ARTIFACT = "org.neo4j:neo4j"
BROWSER_ARTIFACT = "org.neo4j.client:neo4j-browser"


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


def verify_jar_set(lock: JarLock, directory: Path) -> None:
    """The directory must hold exactly the locked jars, each with its locked sha1."""
    expected = {jar.file_name: jar.sha1 for jar in lock.jars}
    present = {path.name for path in directory.glob("*.jar")}
    problems = [f"missing {name}" for name in sorted(expected.keys() - present)]
    problems += [f"unexpected {name}" for name in sorted(present - expected.keys())]
    for name in sorted(expected.keys() & present):
        actual = sha1_of(directory / name)
        if actual != expected[name]:
            problems.append(f"{name} has sha1 {actual}, locked {expected[name]}")
    if problems:
        raise DatabaseError(f"{directory} does not match {LOCK_FILE_NAME}: " + "; ".join(problems[:10]))
