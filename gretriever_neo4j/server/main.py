"""`python -m gretriever_neo4j.server ...`: a command line of the library's own, without Typer or the `gqa` CLI.

CI uses it before `gqa db` can run, and it alone has `install --method` and `lock` (regenerating
`neo4j_jars.lock` with Maven). It prints; the modules it calls do not.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from gretriever_neo4j.errors import GqaError
from gretriever_neo4j.progress import Progress
from gretriever_neo4j.server.download import install
from gretriever_neo4j.server.layout import ServerLayout
from gretriever_neo4j.server.lockfile import LOCK_FILE_NAME, format_lock
from gretriever_neo4j.server.maven import resolve_lock_with_maven
from gretriever_neo4j.server.process import ServerStatus, start, status, stop, tail_logs


def format_status(state: ServerStatus) -> str:
    rows = [
        ("running", f"yes (pid {state.pid})" if state.running else "no"),
        ("version", f"Neo4j {state.version} Community" + ("" if state.installed else " (not installed)")),
        ("bolt", state.bolt_uri),
        ("browser", state.browser_url),
        ("data", str(state.data_dir)),
        ("heap", state.heap),
        ("page cache", state.pagecache),
    ]
    return "\n".join(f"{name:<11}{value}" for name, value in rows)


def _print_progress(p: Progress) -> None:
    if p.done == p.total or p.done % 25 == 0:
        print(f"  {p.done}/{p.total} jars ({p.info['jar']})", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gretriever_neo4j.server",
                                     description="Run the local Neo4j server that gqa manages.")
    commands = parser.add_subparsers(dest="command", required=True)
    start_parser = commands.add_parser("start", help="install if needed, start, wait until Bolt answers")
    start_parser.add_argument("--heap")
    start_parser.add_argument("--pagecache")
    start_parser.add_argument("--bolt-port", type=int)
    start_parser.add_argument("--http-port", type=int)
    start_parser.add_argument("--timeout", type=float, default=120)
    commands.add_parser("stop", help="stop the server (clean shutdown)")
    commands.add_parser("status", help="show whether it runs and where")
    install_parser = commands.add_parser("install", help="fetch the locked jars into the cache")
    install_parser.add_argument("--method", choices=("auto", "download", "maven"), default="auto")
    logs_parser = commands.add_parser("logs", help="show the end of the server logs")
    logs_parser.add_argument("--lines", type=int, default=40)
    lock_parser = commands.add_parser("lock", help="re-resolve the jar set with mvn and write the lock file")
    lock_parser.add_argument("--neo4j", required=True, help="org.neo4j:neo4j version, e.g. 5.26.30")
    lock_parser.add_argument("--browser", required=True, help="org.neo4j.client:neo4j-browser version")
    lock_parser.add_argument("--output", type=Path, default=Path(__file__).with_name(LOCK_FILE_NAME))
    arguments = parser.parse_args(argv)
    layout = ServerLayout.default()
    try:
        if arguments.command == "start":
            began = time.monotonic()
            state = start(layout, timeout=arguments.timeout, heap=arguments.heap, pagecache=arguments.pagecache,
                          bolt_port=arguments.bolt_port, http_port=arguments.http_port, progress=_print_progress)
            print(format_status(state))
            print(f"ready in {time.monotonic() - began:.1f} s")
        elif arguments.command == "stop":
            print(format_status(stop(layout)))
        elif arguments.command == "status":
            print(format_status(status(layout)))
        elif arguments.command == "install":
            result = install(layout, _print_progress, method=arguments.method)
            print(f"{result.jar_count} jars, {result.total_bytes / 1e6:.0f} MB in {result.lib_dir} "
                  f"({result.method}, {result.seconds:.1f} s)")
        elif arguments.command == "logs":
            print(tail_logs(layout, arguments.lines))
        elif arguments.command == "lock":
            jars = resolve_lock_with_maven(arguments.neo4j, arguments.browser)
            header = [
                f"Neo4j {arguments.neo4j} Community server + Neo4j Browser {arguments.browser}: the exact runtime",
                "jar set (mvn dependency:list, scope runtime), fetched from Maven Central and sha1-checked.",
                "Regenerate: python -m gretriever_neo4j.server lock "
                f"--neo4j {arguments.neo4j} --browser {arguments.browser}",
                "Format: group:artifact:version[:classifier] sha1",
            ]
            arguments.output.write_text(format_lock(jars, header=header))
            print(f"wrote {len(jars)} jars to {arguments.output}")
    except GqaError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0
