"""Errors by kind: the status and exit code come from the error's type, never from its text; failures of ours get
a log id whose traceback is in the log, never in what the user sees."""

from __future__ import annotations

import logging
import sys

import pytest
from neo4j.exceptions import ServiceUnavailable, SessionExpired

from gretriever_neo4j.errors import (
    BusyError,
    ConfigError,
    DatabaseError,
    InputError,
    InternalError,
    InvariantError,
    ModelError,
    NotFoundError,
    unknown_graph,
)
from gretriever_neo4j.service.app import failure


@pytest.mark.parametrize("error, status", [
    (InputError("the question is empty", field="question"), 422),
    (unknown_graph("nope"), 404),
    (NotFoundError("no retrieval 'r-1' is recorded"), 404),
    (ConfigError("no learned retriever is trained for graph 'g'"), 400),
    (BusyError("8 answers are being generated"), 429),
    (DatabaseError("Neo4j became unreachable"), 503),
    (ServiceUnavailable("connection refused"), 503),
    (SessionExpired("gone"), 503),
])
def test_each_kind_has_its_status(error, status):
    got, detail, headers = failure(error, "test")
    assert got == status
    if status in (429, 503):
        assert int(headers["Retry-After"]) >= 1
    assert "Traceback" not in detail


@pytest.mark.parametrize("error", [InvariantError("duplicate node key 'x'", field="node_keys"),
                                   InternalError("broken"), KeyError("x"), RuntimeError("boom"),
                                   ModelError("cannot load")])
def test_failures_of_ours_are_500_with_a_log_id_in_the_log(error, caplog):
    with caplog.at_level(logging.ERROR, logger="gretriever_neo4j"):
        try:
            raise error
        except Exception as raised:
            status, detail, _ = failure(raised, "POST /api/ask")
    assert status == 500 and "log id" in detail and str(error) not in detail.replace("log id", "")
    log_id = detail.split("log id ")[1].split(")")[0]
    record = next(r for r in caplog.records if log_id in r.getMessage())
    assert record.exc_info is not None  # the traceback goes to the log


def test_an_invariant_is_never_the_users_input():
    error = InvariantError("duplicate node key 'The Grudge 2'", field="node_keys")
    assert not isinstance(error, InputError) and isinstance(error, ValueError)
    assert error.http_status == 500 and error.exit_code == 2


def test_the_cli_says_exit_2_and_a_log_id_for_a_failure_of_ours(monkeypatch, tmp_path, capsys):
    import gretriever_neo4j.cli as cli

    monkeypatch.setenv("GQA_HOME", str(tmp_path))
    monkeypatch.setattr(sys, "argv", ["gqa", "stats"])

    def broken(**_):
        raise RuntimeError("an invariant broke")

    monkeypatch.setattr(cli, "app", broken)
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "internal error" in err and "log id" in err and "Traceback" not in err
    log_id = err.split("log id ")[1].split(")")[0]
    logged = (tmp_path / "logs" / "gqa.log").read_text()
    assert log_id in logged and "Traceback" in logged and "an invariant broke" in logged


def test_the_cli_says_exit_1_when_neo4j_is_not_there(monkeypatch, tmp_path, capsys):
    import socket

    import gretriever_neo4j.cli as cli

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket closes
    monkeypatch.setenv("GQA_HOME", str(tmp_path))
    monkeypatch.setenv("NEO4J_URI", f"bolt://127.0.0.1:{port}")
    monkeypatch.setenv("NEO4J_PASSWORD", "x")
    monkeypatch.setattr(sys, "argv", ["gqa", "stats"])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert "not reachable" in err and "Traceback" not in err
