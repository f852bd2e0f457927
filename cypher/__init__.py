"""Cypher statements shipped with the package, one file per statement, loaded by name.

Every file starts with a header of `//` comment lines; one of them declares the parameters:

    // Upserts a batch of nodes of one graph.
    // params: $graph, $rows

`load(name)` returns a `CypherQuery` whose `params` are exactly the declared ones; the store supplies
them through `CypherQuery.bind(...)`, which refuses a missing or unexpected parameter. User text never
enters a statement: it travels as a parameter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

_PARAMS_LINE = re.compile(r"^//\s*params:\s*(.*)$", re.IGNORECASE)
_PARAM_NAME = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class CypherQuery:
    name: str
    text: str
    params: frozenset[str]

    def bind(self, **values: object) -> dict[str, object]:
        missing = self.params - values.keys()
        extra = values.keys() - self.params
        if missing or extra:
            raise TypeError(
                f"cypher/{self.name}.cypher: missing parameters {sorted(missing)}, unexpected {sorted(extra)}"
            )
        return values


def names() -> list[str]:
    return sorted(
        entry.name[: -len(".cypher")]
        for entry in resources.files(__package__).iterdir()
        if entry.name.endswith(".cypher")
    )


@cache
def load(name: str) -> CypherQuery:
    resource = resources.files(__package__) / f"{name}.cypher"
    if not resource.is_file():
        raise KeyError(f"no cypher/{name}.cypher")
    text = resource.read_text(encoding="utf-8")
    declared: set[str] | None = None
    for line in text.splitlines():
        match = _PARAMS_LINE.match(line.strip())
        if match:
            declared = {m.group(1) for m in _PARAM_NAME.finditer(match.group(1))}
            break
    if declared is None:
        raise ValueError(f"cypher/{name}.cypher has no '// params:' header line")
    body = "\n".join(l for l in text.splitlines() if not l.strip().startswith("//"))
    used = {m.group(1) for m in _PARAM_NAME.finditer(body)}
    if used != declared:
        raise ValueError(f"cypher/{name}.cypher declares {sorted(declared)} but uses {sorted(used)}")
    return CypherQuery(name=name, text=body.strip(), params=frozenset(declared))
