"""The server's password: NEO4J_PASSWORD, else one generated once and kept beside the server (mode 0600).

A new database learns its initial password from Neo4j's AdminTool before the first start; a marker in the
data directory records that this was done, so it happens once per database.
"""

from __future__ import annotations

import os
import secrets
import string
import subprocess

from gretriever_neo4j.errors import ConfigError, DatabaseError
from gretriever_neo4j.server._files import last_lines
from gretriever_neo4j.server.conf import configure, read_config
from gretriever_neo4j.server.download import install
from gretriever_neo4j.server.java import ADMIN_TOOL, classpath, find_java, server_env
from gretriever_neo4j.server.layout import ServerLayout

NEO4J_USER = "neo4j"
MIN_PASSWORD_LENGTH = 8  # Neo4j's dbms.security.auth_minimum_password_length default


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
    command = [str(java.executable), "-Xmx512m", "-cp", classpath(layout), ADMIN_TOOL,
               "dbms", "set-initial-password", "--", password]  # "--": a password may begin with "-"
    env = {**server_env(), "NEO4J_HOME": str(layout.home), "NEO4J_CONF": str(layout.conf_dir)}
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120,
                            stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).replace(password, "********")
        raise DatabaseError(f"neo4j-admin set-initial-password failed: {last_lines(output, 10)}")
    layout.password_marker.write_text("initial password set by gqa\n")
