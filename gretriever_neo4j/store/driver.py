"""The Neo4j driver: opening it once per process (`open_driver`, which says what to do when the server is
missing or refuses the credentials) and turning driver errors for a server that went away into `DatabaseError`
(`said_unavailable`, applied to every `GraphStore` method). The driver itself is imported only when a
connection is opened."""

from __future__ import annotations

import functools
import inspect

from gretriever_neo4j.errors import DatabaseError, driver_unavailable
from gretriever_neo4j.settings import Neo4jSettings


def open_driver(settings: Neo4jSettings, *, retry_s: float | None = None):
    """One driver per process; fails early with a message that says what to do.

    `retry_s` bounds how long a statement is retried while the server is unreachable (the driver's default is
    30 s): a service would rather answer 503 at once and let the client retry."""
    import neo4j
    from neo4j.exceptions import AuthError, ServiceUnavailable

    if not settings.password:
        raise DatabaseError("no Neo4j password: set NEO4J_PASSWORD (or start the bundled server with `gqa db start`)")
    bounded = {} if retry_s is None else {"max_transaction_retry_time": retry_s, "connection_timeout": retry_s,
                                          "connection_acquisition_timeout": retry_s}
    driver = neo4j.GraphDatabase.driver(
        settings.uri, auth=(settings.user, settings.password),
        # "label does not exist" warnings on a fresh database are expected, not news for the user.
        notifications_min_severity=neo4j.NotificationMinimumSeverity.OFF, **bounded)
    try:
        driver.verify_connectivity()
    except AuthError:
        driver.close()
        raise DatabaseError(f"Neo4j at {settings.uri} refused user '{settings.user}': "
                            "wrong NEO4J_USER/NEO4J_PASSWORD") from None
    except (ServiceUnavailable, OSError, ValueError) as exc:
        driver.close()
        raise DatabaseError(f"Neo4j is not reachable at {settings.uri} ({exc.__class__.__name__}); "
                            "start it with `gqa db start` or set NEO4J_URI") from None
    return driver


def _unavailable(error: BaseException) -> DatabaseError:
    return DatabaseError(f"Neo4j became unreachable ({error.__class__.__name__}); is it running? "
                         "(`gqa db status`)")


def said_unavailable(method):
    """A method whose driver errors for a server that went away become `DatabaseError` (the CLI's exit 1 with what
    to do, the service's 503), instead of escaping as failures of ours."""
    if inspect.isgeneratorfunction(method):
        @functools.wraps(method)
        def stream(*args, **kwargs):
            try:
                yield from method(*args, **kwargs)
            except Exception as error:
                if driver_unavailable(error):
                    raise _unavailable(error) from error
                raise
        return stream

    @functools.wraps(method)
    def call(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except Exception as error:
            if driver_unavailable(error):
                raise _unavailable(error) from error
            raise
    return call
