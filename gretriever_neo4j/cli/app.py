"""The `gqa` Typer app and what its commands share: consoles, the connection options, one store per command,
and how a failure is shown (a user's mistake: one red line, exit 1; ours: a log id, exit 2)."""

from __future__ import annotations

import sys
from contextvars import ContextVar
from typing import Optional

import typer
from rich.console import Console

from gretriever_neo4j.errors import GqaError
from gretriever_neo4j.settings import Neo4jSettings

console = Console(stderr=False)
err_console = Console(stderr=True)

app = typer.Typer(name="gqa", help="Question answering over textual graphs stored in Neo4j (G-Retriever).",
                  no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)


@app.callback()
def _connection_options(
    context: typer.Context,
    uri: Optional[str] = typer.Option(None, "--uri", help="Bolt URI [env NEO4J_URI; default bolt://127.0.0.1:7687]"),
    user: Optional[str] = typer.Option(None, "--user", help="[env NEO4J_USER; default neo4j]"),
    password: Optional[str] = typer.Option(None, "--password",
                                           help="[env NEO4J_PASSWORD; default: the bundled server's]"),
    database: Optional[str] = typer.Option(None, "--database", help="[env NEO4J_DATABASE; default neo4j]"),
    verbose: bool = typer.Option(False, "--verbose", help="show library warnings and debug logs [env GQA_VERBOSE=1]"),
) -> None:
    # Set by every invocation (this callback runs first), so nothing survives from one in-process run to the next.
    # Not read back through click's context stack: Typer runs on a vendored click of its own, whose stack the
    # `click` package cannot see.
    context.obj = {"uri": uri, "user": user, "password": password, "database": database}
    _connection.set(context.obj)


_connection: ContextVar[dict | None] = ContextVar("gqa_connection_options", default=None)


def connection_settings() -> Neo4jSettings:
    """The Neo4j settings of this invocation: --uri/--user/… over the environment over the defaults."""
    return Neo4jSettings.from_env(**(_connection.get() or {}))


def store_session():
    """One driver for this command (the store is the only module that talks to Neo4j)."""
    from gretriever_neo4j.store.graph_store import connected

    return connected(connection_settings())


def nullcontext():
    from contextlib import nullcontext as _null

    return _null()


def int_list(text: str, option: str) -> tuple[int, ...]:
    from gretriever_neo4j.errors import InputError

    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise InputError(f"expected comma-separated integers, got {text!r}", field=option) from None



def fail(error: BaseException) -> None:
    """The user's mistakes: one red line, exit 1. Ours: a log id whose traceback is in the log file, exit 2."""
    from rich.markup import escape

    from gretriever_neo4j.errors import DatabaseError, driver_unavailable, internal_failure
    from gretriever_neo4j.quiet import log_file

    if driver_unavailable(error):
        error = DatabaseError(f"Neo4j became unreachable ({error.__class__.__name__}); is it running? "
                              "(`gqa db status`)")
    if isinstance(error, GqaError) and error.exit_code == 1:
        err_console.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False)
        sys.exit(1)
    log_id = internal_failure(error, "gqa " + " ".join(sys.argv[1:2]), terminal=False)
    err_console.print(f"[bold red]internal error[/] (log id {log_id}): {escape(error.__class__.__name__)}: "
                      f"{escape(str(error).splitlines()[0] if str(error) else '')}\n"
                      f"This is a fault of gqa, not of your input; the traceback is in {log_file()} "
                      f"(search for {log_id}).", highlight=False)
    sys.exit(2)
