"""Running Neo4j on a JVM: finding a Java it supports (17 or 21), and the command lines and environment it runs with.

There is no `neo4j` launcher script here: the server's entry point is started directly with the JVM flags of
the official launcher (`server_command`), and the initial password is set with its AdminTool (see
`password.py`); both share the classpath and the environment built here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.server.conf import ServerConfig
from gretriever_neo4j.server.layout import ServerLayout

SUPPORTED_JAVA_MAJORS = (17, 21)
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
ADMIN_TOOL = "org.neo4j.cli.AdminTool"


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


def classpath(layout: ServerLayout) -> str:
    return os.pathsep.join((f"{layout.plugins_dir}/*", f"{layout.conf_dir}/*", f"{layout.lib_dir}/*"))


def server_env() -> dict[str, str]:
    """The secret stays out of the JVM's environment: it only needs it once, via AdminTool."""
    return {key: value for key, value in os.environ.items() if key != "NEO4J_PASSWORD"}


# Neo4j's vector indexes are Lucene 9.11's HNSW, whose dot products use SIMD (the Panama Vector API) only on Java
# 20-22 with this incubator module readable; on Java 17 they are scalar loops, and inserting a node's vector at
# commit is the largest part of the server's work in an ingest. The flag is passed only on Java 20-22.
VECTOR_API_FLAGS = ("--add-modules=jdk.incubator.vector",)


def server_command(layout: ServerLayout, config: ServerConfig, java: JavaRuntime) -> list[str]:
    vector_api = VECTOR_API_FLAGS if 20 <= java.major <= 22 else ()
    return [str(java.executable), f"-Xms{config.initial_heap}", f"-Xmx{config.heap}", *JVM_FLAGS, *vector_api,
            "-cp", classpath(layout), ENTRY_POINT, f"--home-dir={layout.home}", f"--config-dir={layout.conf_dir}"]
