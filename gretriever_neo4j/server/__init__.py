"""A private Neo4j 5.26 LTS Community server, assembled from Maven Central and run as a plain JVM.

Nothing here needs neo4j.com, Docker or a system package: the exact runtime jar set of
`org.neo4j:neo4j` (the server) and `org.neo4j.client:neo4j-browser` (the web UI) is pinned in
`neo4j_jars.lock` with sha1 sums, fetched once into a cache under `gqa_home()/neo4j/lib`, and
`org.neo4j.server.CommunityEntryPoint` is launched directly with the JVM flags of the official launcher.

Callers write `from gretriever_neo4j import server` and then `server.start(layout)`, `server.status(...)`;
this package re-exports what they use. Its modules, in the order they build on one another:

    lockfile   the lock file: parse, format, check a jar directory against it
    maven      the `mvn` route: fallback install, regenerating the lock
    layout     where a server lives on disk (ServerLayout, default_layout)
    conf       memory and ports (ServerConfig) and the neo4j.conf they are written to
    download   install: the jar download (kept-alive connections, sha1 checks), staged and moved into place
    java       finding Java 17/21; the JVM command lines
    password   NEO4J_PASSWORD or a generated one; the initial password of a new database
    pids       which pid is our server, ending it, one start/stop at a time
    process    status, start, stop, tail_logs
    main       `python -m gretriever_neo4j.server ...`, an argparse CLI of the library's own

The library prints nothing; `gqa db ...` and `python -m gretriever_neo4j.server ...` do the talking.
"""

from __future__ import annotations

from gretriever_neo4j.server.conf import (
    BROWSER_STYLE_COMMAND,
    DEFAULT_HEAP,
    DEFAULT_PAGECACHE,
    ServerConfig,
    configure,
    normalise_size,
    parse_size,
    read_config,
    render_conf,
    write_config,
)
from gretriever_neo4j.server.download import (
    DEFAULT_MAVEN_REPO,
    InstallResult,
    download_jars,
    install,
    is_installed,
)
from gretriever_neo4j.server.java import JVM_FLAGS, JavaRuntime, find_java, server_command
from gretriever_neo4j.server.layout import ServerLayout, default_layout
from gretriever_neo4j.server.lockfile import (
    LOCK_FILE_NAME,
    JarLock,
    LockedJar,
    format_lock,
    packaged_lock,
    parse_lock,
    verify_jar_set,
)
from gretriever_neo4j.server.maven import resolve_lock_with_maven
from gretriever_neo4j.server.password import MIN_PASSWORD_LENGTH, NEO4J_USER, ensure_password
from gretriever_neo4j.server.process import ServerStatus, start, status, stop, tail_logs

__all__ = [
    "BROWSER_STYLE_COMMAND", "DEFAULT_HEAP", "DEFAULT_MAVEN_REPO", "DEFAULT_PAGECACHE", "JVM_FLAGS",
    "LOCK_FILE_NAME", "MIN_PASSWORD_LENGTH", "NEO4J_USER",
    "InstallResult", "JarLock", "JavaRuntime", "LockedJar", "ServerConfig", "ServerLayout",
    "ServerStatus",
    "configure", "default_layout", "download_jars", "ensure_password", "find_java", "format_lock", "install",
    "is_installed", "normalise_size", "packaged_lock", "parse_lock", "parse_size", "read_config", "render_conf",
    "resolve_lock_with_maven", "server_command", "start", "status", "stop", "tail_logs", "verify_jar_set",
    "write_config",
]
