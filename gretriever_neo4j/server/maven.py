"""The `mvn` route to the jar set: the fallback installer when downloading fails, and how the lock is regenerated.

Both build a throw-away pom that depends on the locked server and Browser versions. `copy_with_maven` lets
Maven fetch the runtime closure into a directory (then checks it against the lock); `resolve_lock_with_maven`
asks Maven for that closure and sha1s what it resolved, which is how `neo4j_jars.lock` is written
(`python -m gretriever_neo4j.server lock`). Only these two need a Maven installation.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from gretriever_neo4j.errors import DatabaseError
from gretriever_neo4j.server._files import last_lines, sha1_of
from gretriever_neo4j.server.lockfile import (
    BROWSER_ARTIFACT,
    SERVER_ARTIFACT,
    JarLock,
    LockedJar,
    verify_jar_set,
)


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


def copy_with_maven(lock: JarLock, destination: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="gqa-neo4j-pom-") as workdir:
        Path(workdir, "pom.xml").write_text(_pom(lock))
        command = ["mvn", "-q", "-B", "dependency:copy-dependencies", f"-DoutputDirectory={destination}",
                   "-DincludeScope=runtime"]
        result = subprocess.run(command, cwd=workdir, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise DatabaseError(f"`{' '.join(command)}` failed: {last_lines(result.stdout + result.stderr, 15)}")
    verify_jar_set(lock, destination)


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
            raise DatabaseError(f"`{' '.join(command)}` failed: {last_lines(result.stdout + result.stderr, 15)}")
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
    sha1 = sha1_of(path)
    published = path.with_name(path.name + ".sha1")
    if published.exists() and published.read_text().split()[0].lower() != sha1:
        raise DatabaseError(f"{path} does not match its published {published.name}")
    return LockedJar(group, artifact, version, classifier, sha1)
