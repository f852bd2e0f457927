"""The architecture, enforced: data flows one way through the package's rooms, and none imports a room above it.

    cli, service  →  qa, train  →  retrievers, answering, ingest  →  retrieval, reader, model  →  store,
    embedding, artifacts, loaders, server  →  errors, settings, records, metrics, quiet, cypher, progress,
    threads, language

Every import counts, function-local ones too (they are deferred, not absent). `train` (training code) is used by
the CLI only: the library answers questions without it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "gretriever_neo4j"
FOLDERS = {PACKAGE: ROOT / PACKAGE, f"{PACKAGE}.train": ROOT / "train", f"{PACKAGE}.loaders": ROOT / "loaders"}

# A room may import rooms of its own level or below, never above.
LEVELS = {
    "__init__": 0, "errors": 0, "settings": 0, "records": 0, "metrics": 0, "quiet": 0, "cypher": 0, "progress": 0,
    "threads": 0, "language": 0,
    "store": 1, "embedding": 1, "artifacts": 1, "loaders": 1, "server": 1,
    "retrieval": 2, "reader": 2, "model": 2,
    "retrievers": 3, "answering": 3, "ingest": 3,
    "qa": 4, "train": 4,
    "cli": 5, "service": 5, "__main__": 5,
}
# Within a level, who may use whom (the pairs absent here may not import each other at all).
SIDEWAYS = {("store", "loaders"), ("reader", "retrieval"), ("model", "retrieval"), ("train", "qa"),
            ("answering", "retrievers"), ("cli", "service"), ("__main__", "cli")}
BASE = 0  # the base modules (errors, settings, …) may use each other
LIBRARY_NEVER_IMPORTS = {"train", "cli"}  # except the CLI itself (and train, which is training code)


def modules() -> dict[str, Path]:
    found = {}
    for name, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([name, *parts])] = path
    return found


def imports_of(module: str, path: Path) -> set[str]:
    """Every module of the package that `module` imports, at the top or inside a function."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)  # `from pkg import module`
    return {name for name in found if name == PACKAGE or name.startswith(PACKAGE + ".")}


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def room_edges() -> dict[tuple[str, str], list[str]]:
    known = modules()
    edges = defaultdict(list)
    for module, path in known.items():
        for target in imports_of(module, path):
            if target not in known and target.rsplit(".", 1)[0] in known:
                target = target.rsplit(".", 1)[0]  # `from pkg.module import name`
            if target not in known or room(target) == room(module) or room(module) == "__init__":
                continue
            if f"{module} -> {target}" not in edges[(room(module), room(target))]:
                edges[(room(module), room(target))].append(f"{module} -> {target}")
    return edges


def test_every_module_is_in_a_known_room():
    rooms = {room(m) for m in modules()} - {"__init__"}
    assert rooms <= set(LEVELS), f"rooms without a level: {sorted(rooms - set(LEVELS))}"


def test_no_room_imports_a_room_above_it():
    wrong = []
    for (source, target), where in room_edges().items():
        if LEVELS[target] > LEVELS[source]:
            wrong += where
        elif LEVELS[target] == LEVELS[source] != BASE and (source, target) not in SIDEWAYS:
            wrong += where
    assert not wrong, "imports against the layers:\n" + "\n".join(sorted(wrong))


@pytest.mark.parametrize("forbidden", sorted(LIBRARY_NEVER_IMPORTS))
def test_the_library_never_imports_training_or_cli_code(forbidden):
    wrong = [line for (source, target), where in room_edges().items() for line in where
             if target == forbidden and source not in ("cli", "__main__")]
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycle_between_modules():
    """Top-level imports only: a function-local import runs after both modules are loaded, but a cycle of
    top-level imports fails depending on which module is imported first."""
    known = modules()
    graph = {}
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = ast.Module(body=[n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))], type_ignores=[])
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        targets = set()
        for node in top.body:
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [_absolute(node, package)] + [f"{_absolute(node, package)}.{a.name}" for a in node.names])
            targets.update(n for n in names if n in known and n != module)
        graph[module] = targets
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    # A package's __init__ re-exporting its own modules is not a cycle that can fail.
    cycles = [c for c in cycles if not _within_one_package(c)]
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _within_one_package(cycle: str) -> bool:
    members = cycle.split(" -> ")
    return any(all(m == pkg or m.startswith(pkg + ".") for m in members) and pkg in members
               for pkg in members)
