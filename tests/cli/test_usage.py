"""How `gqa` treats a mistyped command line and its connection options, as a real process (what `main()` does)."""

from __future__ import annotations

import pytest

from cli_helpers import gqa


@pytest.mark.parametrize("args, message", [
    (("no-such-command",), "No such command"),
    (("ask", "--no-such-option", "q"), "No such option"),
    (("ask", "q", "--hops", "many"), "Invalid value"),
])
def test_a_usage_mistake_is_the_users_exit_2_with_clicks_message(args, message):
    done = gqa(*args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_uri_option_is_the_one_connected_to():
    """--uri on the command line wins over the environment (port 1: nothing listens there)."""
    done = gqa("--uri", "bolt://127.0.0.1:1", "ask", "who directed Butley", "--graph", "metaqa",
               env={"NEO4J_URI": "bolt://127.0.0.1:7687"})
    assert done.returncode == 1, done.stderr
    assert "bolt://127.0.0.1:1" in done.stderr
