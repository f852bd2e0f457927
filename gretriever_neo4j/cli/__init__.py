"""`gqa`: a thin command line over the library (each command module registers itself on `app`)."""

from __future__ import annotations

import os
import sys

from gretriever_neo4j.cli import ask, db, feedback, graphs, ingest, quickstart, serve, train  # noqa: F401  (registration)
from gretriever_neo4j.cli.app import app, err_console, fail
from gretriever_neo4j.errors import GqaError


def _usage_error(error: BaseException) -> bool:
    """Click's usage and parameter errors (`show()` and `exit_code`), from the `click` package or from the
    copy of click that Typer vendors (its exceptions are other classes than the package's)."""
    return callable(getattr(error, "show", None)) and isinstance(getattr(error, "exit_code", None), int)


def main() -> None:
    import click
    import typer

    from gretriever_neo4j import quiet, threads

    quiet.request()
    threads.one_blas_thread()
    if "--verbose" in sys.argv[1:]:  # logging is set up before the options are parsed
        os.environ["GQA_VERBOSE"] = "1"
    quiet.configure_logging()
    try:
        outcome = app(standalone_mode=False)
    except GqaError as error:
        fail(error)
    except (click.exceptions.Abort, typer.Abort):
        err_console.print("[red]aborted[/]")
        sys.exit(1)
    except KeyboardInterrupt:
        err_console.print("[red]interrupted[/] — completed batches are stored; run the same command to resume")
        sys.exit(130)
    except (click.exceptions.Exit, typer.Exit) as done:
        sys.exit(done.exit_code)
    except Exception as error:
        if _usage_error(error):  # "No such option: --bogus": click's message and exit code 2
            error.show()
            sys.exit(error.exit_code)
        fail(error)  # a failure of ours (or Neo4j gone mid-command): never shown as the user's fault
    sys.exit(outcome if isinstance(outcome, int) else 0)


