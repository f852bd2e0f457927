"""One error root. Each subclass says who is at fault, by the HTTP status and CLI exit code it carries:

* the user's mistakes (bad input, an unknown graph, a missing model they can train): 4xx, exit code 1;
* the environment (Neo4j unreachable): 503 with Retry-After, exit code 1 with what to do;
* our own failures (an invariant broke): 500 with a log id, exit code 2 with the log id. An exception that is no
  `GqaError` at all is treated the same way by the CLI and the service (`internal_failure`).
"""

from __future__ import annotations

import logging
import secrets
from pathlib import Path


class GqaError(Exception):
    """Root of every error gqa raises on purpose."""

    http_status = 400
    exit_code = 1


class InputError(GqaError):
    """Bad user input, located as precisely as we can: file and line, or field."""

    http_status = 422

    def __init__(self, message: str, *, source: str | Path | None = None,
                 line: int | None = None, field: str | None = None):
        self.reason = message
        self.source = str(source) if source is not None else None
        self.line = line
        self.field = field
        where = []
        if self.source:
            where.append(self.source + (f":{line}" if line is not None else ""))
        elif line is not None:
            where.append(f"line {line}")
        if field:
            where.append(f"field '{field}'")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class ConfigError(GqaError):
    """Inconsistent settings: unknown dataset, model/index dimension mismatch, missing checkpoint."""


class NotFoundError(ConfigError):
    """A named thing (graph, retrieval, dataset) is not stored."""

    http_status = 404


class ConflictError(GqaError):
    """The request is sound but what it names is in a state that refuses it (a graph being dropped): 409. Unlike
    `GraphChangingError`, retrying soon is no remedy (a dropped graph stays gone)."""

    http_status = 409


class DatabaseError(GqaError):
    """Neo4j is unreachable, refuses our credentials, or lacks the schema we need."""

    http_status = 503
    retry_after_s = 5


class GraphChangingError(GqaError):
    """A graph changed under a retrieval (a node or edge it was reading vanished), or is being dropped with no
    copy held to answer from: the same request succeeds (or finds the graph gone, 404) once the change is done.
    The service answers 503 with Retry-After and a log id."""

    http_status = 503
    retry_after_s = 1


class ModelError(GqaError):
    """A model cannot be found or loaded, or does not fit (no causal-LM head, wrong hidden size). The user of
    the CLI can fix it (exit 1); a client of the service cannot (500)."""

    http_status = 500


class BusyError(GqaError):
    """Too much work under way; the same request may succeed shortly."""

    http_status = 429
    retry_after_s = 1


class InternalError(GqaError):
    """An invariant of ours broke: never the user's fault."""

    http_status = 500
    exit_code = 2


class InvariantError(InternalError, ValueError):
    """A data structure was built inconsistently (duplicate keys, indexes out of range): a bug in the code that
    built it. A `ValueError` too, for library callers who pass arrays of their own."""

    def __init__(self, message: str, *, field: str | None = None):
        self.field = field
        super().__init__(f"field '{field}': {message}" if field else message)


log = logging.getLogger("gretriever_neo4j")


def new_log_id() -> str:
    return secrets.token_hex(4)


def internal_failure(error: BaseException, where: str, *, terminal: bool = True) -> str:
    """Log `error` with its traceback under a fresh short id and return the id (the user sees the id, never the
    traceback). `terminal=False`: only the log file gets it (the CLI prints its own message)."""
    log_id = new_log_id()
    log.error("internal error %s in %s: %s: %s", log_id, where, error.__class__.__name__, error,
              exc_info=(type(error), error, error.__traceback__), extra={"file_only": not terminal})
    return log_id


def driver_unavailable(error: BaseException) -> bool:
    """The Neo4j driver says the server went away (as opposed to rejecting a statement)."""
    try:
        from neo4j.exceptions import ServiceUnavailable, SessionExpired
    except ImportError:  # pragma: no cover - the driver is a dependency
        return False
    return isinstance(error, (ServiceUnavailable, SessionExpired, ConnectionError))


def unknown_graph(graph: str) -> NotFoundError:
    return NotFoundError(f"no stored graph is called {graph!r} (see `gqa stats`)")
