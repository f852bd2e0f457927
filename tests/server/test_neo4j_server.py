"""The local Neo4j server: lock file, configuration, and (marked neo4j) real servers.

The `neo4j` tests use the main server that `gqa db start` (or CI) started, and one throw-away server
of their own in a temporary GQA_HOME on free ports, sharing the main jar cache so nothing is downloaded.
"""

from __future__ import annotations

import os
import socket
import stat
import textwrap
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from gretriever_neo4j.errors import ConfigError, DatabaseError, InputError
from gretriever_neo4j.server import (
    LockedJar,
    ServerConfig,
    ServerLayout,
    configure,
    ensure_password,
    find_java,
    is_installed,
    packaged_lock,
    parse_lock,
    read_config,
    server_command,
    start,
    status,
    stop,
)
from gretriever_neo4j.server.password import _stored_or_new_password

SHA_A = "a" * 40
SHA_B = "b" * 40


# ---------------------------------------------------------------------------------------------- lock


def test_packaged_lock_pins_neo4j_5_26_and_the_browser():
    lock = packaged_lock()
    assert lock.neo4j_version == "5.26.30"
    assert lock.browser_version == "5.24.0"
    assert len(lock.jars) == 214
    assert len({jar.file_name for jar in lock.jars}) == 214
    assert all(len(jar.sha1) == 40 for jar in lock.jars)
    coordinates = {jar.coordinates for jar in lock.jars}
    assert "org.neo4j:neo4j-kernel:5.26.30" in coordinates
    assert "io.netty:netty-transport-native-epoll:4.1.137.Final:linux-x86_64" in coordinates


def test_locked_jar_names_and_urls_follow_the_maven_layout():
    epoll = LockedJar("io.netty", "netty-transport-native-epoll", "4.1.137.Final", "linux-x86_64", SHA_A)
    assert epoll.file_name == "netty-transport-native-epoll-4.1.137.Final-linux-x86_64.jar"
    assert epoll.url("https://repo.example/maven2/") == (
        "https://repo.example/maven2/io/netty/netty-transport-native-epoll/4.1.137.Final/"
        "netty-transport-native-epoll-4.1.137.Final-linux-x86_64.jar"
    )
    plain = LockedJar("org.neo4j", "neo4j", "5.26.30", None, SHA_B)
    assert plain.coordinates == "org.neo4j:neo4j:5.26.30"
    assert plain.file_name == "neo4j-5.26.30.jar"


def test_parse_lock_reads_classifiers_and_skips_comments():
    lock = parse_lock(textwrap.dedent(f"""\
        # a comment

        org.neo4j:neo4j:5.26.30 {SHA_A}
        io.netty:netty-transport-native-epoll:4.1.137.Final:linux-x86_64 {SHA_B.upper()}
        """))
    assert [(jar.artifact, jar.classifier, jar.sha1) for jar in lock.jars] == [
        ("neo4j", None, SHA_A),
        ("netty-transport-native-epoll", "linux-x86_64", SHA_B),
    ]
    same_jars_other_comments = parse_lock(
        f"org.neo4j:neo4j:5.26.30 {SHA_A}\n# x\n"
        f"io.netty:netty-transport-native-epoll:4.1.137.Final:linux-x86_64 {SHA_B}\n"
    )
    assert same_jars_other_comments.digest == lock.digest


@pytest.mark.parametrize(
    ("third_line", "reason"),
    [
        ("org.neo4j:neo4j-kernel:5.26.30 not-a-sha", "is not a 40-digit hex sha1"),
        ("org.neo4j:neo4j-kernel 0123", "expected 'group:artifact:version[:classifier] sha1'"),
        (f"org.neo4j:neo4j:5.26.30 {SHA_B}", "neo4j-5.26.30.jar is already pinned on line 2"),
    ],
)
def test_parse_lock_names_file_and_line(third_line, reason):
    text = f"# header\norg.neo4j:neo4j:5.26.30 {SHA_A}\n{third_line}\n"
    with pytest.raises(InputError) as caught:
        parse_lock(text, source="my.lock")
    assert caught.value.source == "my.lock"
    assert caught.value.line == 3
    assert caught.value.reason.endswith(reason)
    assert str(caught.value).startswith("my.lock:3: ")


# -------------------------------------------------------------------------------------- configuration


def test_configure_writes_a_loopback_only_conf_that_reads_back(tmp_path):
    layout = ServerLayout.at(tmp_path / "neo4j")
    config = configure(layout, heap="1G", pagecache="256m", bolt_port=17687, http_port=17474)
    assert config == ServerConfig(heap="1g", pagecache="256m", bolt_port=17687, http_port=17474)
    lines = set(layout.conf_file.read_text().splitlines())
    assert {
        "server.default_listen_address=127.0.0.1",
        "server.bolt.listen_address=127.0.0.1:17687",
        "server.http.listen_address=127.0.0.1:17474",
        "server.https.enabled=false",
        "dbms.security.auth_enabled=true",
        "server.memory.heap.initial_size=512m",
        "server.memory.heap.max_size=1g",
        "server.memory.pagecache.size=256m",
        f"server.directories.data={layout.data_dir}",
        f"server.directories.logs={layout.logs_dir}",
    } <= lines
    assert read_config(layout) == config
    assert config.bolt_uri == "bolt://127.0.0.1:17687"
    assert config.browser_url == "http://127.0.0.1:17474/browser/"


def test_java_21_reads_the_vector_api_module_that_lucene_computes_vector_distances_with(tmp_path):
    from gretriever_neo4j.server.java import JavaRuntime

    layout, config = ServerLayout.at(tmp_path / "neo4j"), ServerConfig()
    on_21 = server_command(layout, config, JavaRuntime(Path("/jdk21/bin/java"), 21))
    on_17 = server_command(layout, config, JavaRuntime(Path("/jdk17/bin/java"), 17))
    assert "--add-modules=jdk.incubator.vector" in on_21[:on_21.index("-cp")]
    assert "--add-modules=jdk.incubator.vector" not in on_17
    assert on_21[on_21.index("-cp"):] == on_17[on_17.index("-cp"):]


def test_memory_comes_from_arguments_then_environment_then_defaults(monkeypatch):
    monkeypatch.delenv("GQA_NEO4J_HEAP", raising=False)
    monkeypatch.delenv("GQA_NEO4J_PAGECACHE", raising=False)
    assert (ServerConfig.resolve().heap, ServerConfig.resolve().pagecache) == ("2g", "2g")
    monkeypatch.setenv("GQA_NEO4J_HEAP", "3g")
    monkeypatch.setenv("GQA_NEO4J_PAGECACHE", "768M")
    assert (ServerConfig.resolve().heap, ServerConfig.resolve().pagecache) == ("3g", "768m")
    assert ServerConfig.resolve(heap="256m").heap == "256m"
    assert ServerConfig.resolve(heap="256m").initial_heap == "256m"
    monkeypatch.setenv("GQA_NEO4J_HEAP", "lots")
    with pytest.raises(ConfigError, match="GQA_NEO4J_HEAP: 'lots' is not a memory size"):
        ServerConfig.resolve()


def test_config_refuses_clashing_or_impossible_ports():
    with pytest.raises(ConfigError, match="both 7000"):
        ServerConfig(bolt_port=7000, http_port=7000)
    with pytest.raises(ConfigError, match="bolt_port: 70000 is not a TCP port"):
        ServerConfig(bolt_port=70000)


def test_start_refuses_a_port_another_process_holds(tmp_path):
    layout = ServerLayout.at(tmp_path / "neo4j")
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        config = ServerConfig(heap="256m", pagecache="64m", bolt_port=taken, http_port=_free_port())
        with pytest.raises(DatabaseError, match=f"Bolt port 127.0.0.1:{taken} is already in use"):
            start(layout, config=config, timeout=5)
    assert status(layout).running is False


def test_start_settings_come_from_arguments_then_environment_then_last_conf(tmp_path, monkeypatch):
    layout = ServerLayout.at(tmp_path / "neo4j")
    configure(layout, heap="1g", pagecache="512m", bolt_port=_free_port(), http_port=_free_port())
    before = read_config(layout)
    monkeypatch.setenv("GQA_NEO4J_PAGECACHE", "300m")
    monkeypatch.delenv("GQA_NEO4J_HEAP", raising=False)
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        with pytest.raises(DatabaseError, match=f"HTTP port 127.0.0.1:{taken} is already in use"):
            start(layout, heap="768m", http_port=taken, timeout=5)
    # The refused start still recorded what it was asked for, on top of what the last one used.
    assert read_config(layout) == ServerConfig(heap="768m", pagecache="300m", bolt_port=before.bolt_port,
                                               http_port=taken)


def test_password_comes_from_the_environment_before_the_file(tmp_path, monkeypatch):
    layout = ServerLayout.at(tmp_path / "neo4j")
    layout.make_dirs()
    layout.password_marker.write_text("set\n")  # as after a first start: no AdminTool run needed
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    generated = ensure_password(layout)
    assert len(generated) >= 20
    assert layout.password_file.read_text().strip() == generated
    assert stat.S_IMODE(layout.password_file.stat().st_mode) == 0o600
    assert ensure_password(layout) == generated
    monkeypatch.setenv("NEO4J_PASSWORD", "from-the-env")
    assert ensure_password(layout) == "from-the-env"
    monkeypatch.setenv("NEO4J_PASSWORD", "short")
    with pytest.raises(ConfigError, match="at least 8 characters"):
        ensure_password(layout)


@pytest.mark.parametrize(("version_line", "major"), [('openjdk version "25.0.1" 2025-10-21', 25),
                                                     ('java version "1.8.0_392"', 8)])
def test_java_other_than_17_or_21_is_refused(tmp_path, monkeypatch, version_line, major):
    fake_java = tmp_path / "jdk" / "bin" / "java"
    fake_java.parent.mkdir(parents=True)
    fake_java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    fake_java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    with pytest.raises(ConfigError, match=f"is Java {major}; Neo4j 5.26 needs Java 17 or 21"):
        find_java()


# ------------------------------------------------------------------------------------- real servers


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def main_server():
    layout = ServerLayout.default()
    if not status(layout).running:
        if os.environ.get("GQA_REQUIRE_NEO4J") == "1":
            pytest.fail(f"GQA_REQUIRE_NEO4J=1 but the Neo4j server under {layout.root} is not running")
        pytest.skip("the main Neo4j server is not running (gqa db start)")
    return layout


@pytest.mark.neo4j
def test_start_is_idempotent_on_a_running_server(main_server):
    before = status(main_server)
    began = time.monotonic()
    again = start(main_server)
    assert time.monotonic() - began < 5
    assert again == before
    assert again.pid == int(main_server.pid_file.read_text())


@pytest.mark.neo4j
def test_status_describes_the_running_server(main_server):
    state = status(main_server)
    config = read_config(main_server)
    assert state.running and state.installed
    assert state.version == "5.26.30"
    assert state.bolt_uri == f"bolt://127.0.0.1:{config.bolt_port}"
    assert state.browser_url == f"http://127.0.0.1:{config.http_port}/browser/"
    assert (state.heap, state.pagecache) == (config.heap, config.pagecache)
    assert state.data_dir == main_server.data_dir
    assert (state.data_dir / "databases" / "neo4j").is_dir()


@pytest.mark.neo4j
def test_browser_is_served(main_server):
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
            status(main_server).browser_url, timeout=10) as response:
        assert response.status == 200
        assert b"<title>Neo4j Browser</title>" in response.read()


@pytest.mark.neo4j
def test_wrong_password_is_refused(main_server):
    import neo4j
    from neo4j.exceptions import AuthError

    from gretriever_neo4j.settings import Neo4jSettings

    settings = Neo4jSettings.from_env()
    uri = status(main_server).bolt_uri
    with neo4j.GraphDatabase.driver(uri, auth=(settings.user, settings.password)) as driver:
        records, _, _ = driver.execute_query("RETURN 40 + 2 AS answer")
        assert records[0]["answer"] == 42
    with neo4j.GraphDatabase.driver(uri, auth=(settings.user, f"not-{settings.password}")) as driver:
        with pytest.raises(AuthError):
            driver.verify_connectivity()


@pytest.fixture
def private_server(tmp_path, monkeypatch):
    """A second server in its own GQA_HOME and ports, borrowing the main jar cache."""
    layout = ServerLayout.at(tmp_path / "neo4j", jar_cache=ServerLayout.default().jar_cache)
    if not is_installed(layout):
        pytest.skip("the Neo4j jars are not installed yet (gqa db install)")
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    config = ServerConfig(heap="512m", pagecache="128m", bolt_port=_free_port(), http_port=_free_port())
    yield layout, config
    stop(layout)


def test_generated_passwords_never_begin_with_a_dash(tmp_path):
    """neo4j-admin takes an argument that begins with "-" for an option (a CI run met one)."""
    for n in range(300):
        layout = ServerLayout.at(tmp_path / str(n))
        assert not _stored_or_new_password(layout).startswith("-")


@pytest.mark.neo4j
def test_a_password_beginning_with_a_dash_is_set(private_server):
    layout, _ = private_server
    layout.root.mkdir(parents=True, exist_ok=True)
    layout.password_file.write_text("-begins-with-a-dash-0123\n")
    assert ensure_password(layout) == "-begins-with-a-dash-0123"
    assert layout.password_marker.exists()


@pytest.mark.neo4j
def test_data_and_password_persist_across_restart(private_server):
    import neo4j

    layout, config = private_server
    first = start(layout, config=config, timeout=180)
    assert first.running and first.bolt_uri == config.bolt_uri
    password = layout.password_file.read_text().strip()
    assert stat.S_IMODE(layout.password_file.stat().st_mode) == 0o600
    marker = str(uuid.uuid4())
    with neo4j.GraphDatabase.driver(config.bolt_uri, auth=("neo4j", password)) as driver:
        driver.execute_query("CREATE (:PersistenceProbe {marker: $marker})", marker=marker)

    stopped = stop(layout)
    assert stopped.running is False and not layout.pid_file.exists()
    assert stop(layout).running is False  # stopping twice is fine

    second = start(layout, timeout=180)  # no config: the ports chosen before stay
    assert second.running and second.pid != first.pid and second.bolt_uri == config.bolt_uri
    assert layout.password_file.read_text().strip() == password
    with neo4j.GraphDatabase.driver(config.bolt_uri, auth=("neo4j", password)) as driver:
        records, _, _ = driver.execute_query(
            "MATCH (probe:PersistenceProbe) RETURN collect(probe.marker) AS markers")
    assert records[0]["markers"] == [marker]
    assert os.path.isdir(Path(layout.data_dir, "databases", "neo4j"))
