"""`gqa`: a thin command line over the library (each command module registers itself on `app`)."""

from __future__ import annotations

import os
import sys

from gretriever_neo4j.cli import ask, db, graphs, ingest, quickstart, serve, train  # noqa: F401  (registration)
from gretriever_neo4j.cli.app import app, err_console, fail
from gretriever_neo4j.errors import GqaError


def main() -> None:
    import click

    from gretriever_neo4j import quiet

    quiet.request()
    if "--verbose" in sys.argv[1:]:  # logging is set up before the options are parsed
        os.environ["GQA_VERBOSE"] = "1"
    quiet.configure_logging()
    try:
        outcome = app(standalone_mode=False)
    except GqaError as error:
        fail(error)
    except click.exceptions.Abort:
        err_console.print("[red]aborted[/]")
        sys.exit(1)
    except KeyboardInterrupt:
        err_console.print("[red]interrupted[/] — completed batches are stored; run the same command to resume")
        sys.exit(130)
    except click.exceptions.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except Exception as error:  # a failure of ours (or Neo4j gone mid-command): never shown as the user's fault
        fail(error)
    sys.exit(outcome if isinstance(outcome, int) else 0)


