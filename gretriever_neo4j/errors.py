"""One error root. The CLI maps every GqaError to a one-line message and exit code 1."""

from __future__ import annotations

from pathlib import Path


class GqaError(Exception):
    """Root of every error a user can cause or fix (bad input, missing server, missing model)."""


class InputError(GqaError):
    """Bad user input, located as precisely as we can: file and line, or field."""

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


class DatabaseError(GqaError):
    """Neo4j is unreachable, refuses our credentials, or lacks the schema we need."""


class ModelError(GqaError):
    """A model cannot be found or loaded, or does not fit (no causal-LM head, wrong hidden size)."""
