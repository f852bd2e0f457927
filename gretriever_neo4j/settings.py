"""Settings read from the environment; CLI flags override them. Nothing secret is hard-coded."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def gqa_home() -> Path:
    """Where gqa keeps caches: the Neo4j install, converted LLM checkpoints, retrieval caches."""
    return Path(os.environ.get("GQA_HOME", Path.home() / ".cache" / "gqa")).expanduser()


@dataclass(frozen=True)
class Neo4jSettings:
    uri: str = "bolt://127.0.0.1:7687"
    user: str = "neo4j"
    password: str | None = None
    database: str = "neo4j"

    @classmethod
    def from_env(cls, **overrides: str | None) -> Neo4jSettings:
        values = {
            "uri": os.environ.get("NEO4J_URI", cls.uri),
            "user": os.environ.get("NEO4J_USER", cls.user),
            "password": os.environ.get("NEO4J_PASSWORD") or _password_from_local_server(),
            "database": os.environ.get("NEO4J_DATABASE", cls.database),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    @property
    def http_url(self) -> str:
        host = self.uri.split("://", 1)[-1].split(":", 1)[0].split("/", 1)[0]
        return f"http://{host}:{os.environ.get('NEO4J_HTTP_PORT', '7474')}"

    @property
    def browser_url(self) -> str:
        return f"{self.http_url}/browser/"


def _password_from_local_server() -> str | None:
    """`gqa db start` generates a password once and keeps it (mode 600) beside the server it manages."""
    secret = gqa_home() / "neo4j" / "password"
    try:
        return secret.read_text().strip() or None
    except OSError:
        return None


def from_known_fields(cls, data: Mapping[str, Any], what: str):
    """`cls(**data)` for the frozen config dataclass `cls`, refusing keys that are none of its fields with a
    `ConfigError` naming `what` ("reader settings") and the known keys: a config saved by another version says
    which setting it does not know instead of failing in the constructor."""
    from gretriever_neo4j.errors import ConfigError

    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"unknown {what} {unknown}; known: {sorted(known)}")
    return cls(**data)


def require_positive_integers(config, names: Sequence[str]) -> None:
    """Raises `InputError` naming the first of the fields `names` of `config` that is not an integer >= 1 (a bool
    is not one): a config's counts, checked where it is made."""
    from gretriever_neo4j.errors import InputError

    for name in names:
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"must be an integer >= 1, got {value!r}", field=name)
