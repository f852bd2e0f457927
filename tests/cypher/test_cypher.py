"""Every shipped statement loads, declares exactly the parameters it uses, and every call supplies them."""

import ast
from pathlib import Path

import pytest

from gretriever_neo4j import cypher

SOURCE = Path(__file__).resolve().parents[2] / "gretriever_neo4j"


def test_every_statement_loads_with_declared_parameters():
    names = cypher.names()
    assert len(names) >= 20
    for name in names:
        query = cypher.load(name)
        assert query.text and not query.text.lstrip().startswith("//")


def _calls_by_name():
    """(statement name, keyword names, file:line) for each store call that names a statement literally."""
    found = []
    for path in SOURCE.rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in {"read", "write", "_tx"}:
                continue
            if not (isinstance(node.func.value, ast.Name) and node.func.value.id in {"self", "store"}):
                continue
            literal = [a for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if not literal or any(k.arg is None for k in node.keywords):
                continue
            found.append((literal[0].value, {k.arg for k in node.keywords}, f"{path.name}:{node.lineno}"))
    return found


def test_every_call_supplies_exactly_the_declared_parameters():
    calls = _calls_by_name()
    assert len(calls) >= 15
    for name, keywords, where in calls:
        query = cypher.load(name)
        assert keywords == set(query.params), (
            f"{where} calls {name} with {sorted(keywords)}, declared {sorted(query.params)}")


def test_every_statement_is_used_somewhere():
    used = {name for name, _, _ in _calls_by_name()}
    text = "\n".join(p.read_text() for p in SOURCE.rglob("*.py"))
    for name in cypher.names():
        assert name in used or f'"{name}"' in text, f"cypher/{name}.cypher is never used"


def test_bind_refuses_missing_and_unexpected_parameters():
    query = cypher.load("questions_by_split")
    assert query.bind(dataset="x", split=None) == {"dataset": "x", "split": None}
    with pytest.raises(TypeError, match="missing"):
        query.bind(dataset="x")
    with pytest.raises(TypeError, match="unexpected"):
        query.bind(dataset="x", split=None, extra=1)


def test_unknown_statement_is_a_key_error():
    with pytest.raises(KeyError):
        cypher.load("no_such_statement")
