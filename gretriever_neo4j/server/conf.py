"""The server's settings: memory sizes and ports (`ServerConfig`), and the neo4j.conf they are written to and read from.

Sizes come from arguments, then GQA_NEO4J_HEAP / GQA_NEO4J_PAGECACHE, then defaults meant for a machine
that also trains with PyTorch. `render_conf` is the only place neo4j.conf's contents are decided: loopback
only, auth on, https off, no usage reports; `read_config` reads back what the last start used, so a restart
keeps its ports and memory.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.server._files import atomic_write
from gretriever_neo4j.server.layout import ServerLayout

# Neo4j Browser's stylesheet for gqa's graphs, as the `:style` command that sets it (no ';': Browser splits
# post-connect commands there). Shared with docker-compose.yml and printed by `gqa show`.
BROWSER_STYLE_COMMAND = ("style node.Node {caption: '{text}'} relationship.REL {caption: '{text}'} "
                         "node.Retrieval {caption: '{question}'}")


# Sized for a 24 GiB machine that also trains with PyTorch.
DEFAULT_HEAP = "2g"
DEFAULT_PAGECACHE = "2g"
INITIAL_HEAP_CAP = "512m"  # start small and let G1 grow: the rest of the machine belongs to PyTorch
TX_LOG_RETENTION = "1 days 512M"


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


def env_size(name: str) -> str | None:
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
                bolt_port: int = 7687, http_port: int = 7474) -> ServerConfig:
        """Arguments win over GQA_NEO4J_HEAP / GQA_NEO4J_PAGECACHE, which win over the defaults."""
        return cls(
            heap=heap or env_size("GQA_NEO4J_HEAP") or DEFAULT_HEAP,
            pagecache=pagecache or env_size("GQA_NEO4J_PAGECACHE") or DEFAULT_PAGECACHE,
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
        "# Written by gretriever_neo4j.server.configure; `gqa db start` rewrites it when given",
        "# --heap/--pagecache/ports. JVM flags are passed by the launcher, not read from here.",
    ]
    return "\n".join(header + [f"{key}={value}" for key, value in settings.items()]) + "\n"


def write_config(layout: ServerLayout, config: ServerConfig) -> ServerConfig:
    layout.make_dirs()
    atomic_write(layout.conf_file, render_conf(layout, config))
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
