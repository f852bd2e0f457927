"""`gqa ask` through a running `gqa serve` (the models are loaded there already), with the standard library only:
the CLI must not pay for importing torch to find out that a server answers.

The server is GQA_SERVER (default http://127.0.0.1:8765); GQA_SERVER=off disables the fast path. Its token is
GQA_SERVE_TOKEN. When nothing answers within a fraction of a second, `gqa ask` works in-process as before.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

from gretriever_neo4j.errors import ConfigError, DatabaseError, InputError

DEFAULT_SERVER = "http://127.0.0.1:8765"
PROBE_SECONDS = 0.3


def server_url() -> str | None:
    url = os.environ.get("GQA_SERVER", DEFAULT_SERVER).strip()
    return None if url.lower() in ("", "off", "none", "0") else url.rstrip("/")


def _request(url: str, body: dict | None = None, timeout: float = 600.0) -> dict:
    headers = {"Content-Type": "application/json"}
    token = os.environ.get("GQA_SERVE_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if body is not None else "GET")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def ask_server(question: str, *, graph: str | None, retriever: str, retrieve_only: bool, mode: str,
               llm_when: str) -> dict | None:
    """The service's answer as `QAResult.to_dict()` has it, or None when no server answers (then ask in-process).
    A server that answers with an error raises it as the CLI's own error (exit 1)."""
    base = server_url()
    if base is None:
        return None
    try:
        _request(f"{base}/health", timeout=PROBE_SECONDS)
    except (OSError, ValueError):
        return None
    body = {"question": question, "graph": graph, "retriever": retriever}
    try:
        if retrieve_only:
            return _request(f"{base}/api/retrieve", body)
        return _request(f"{base}/api/ask", {**body, "mode": mode, "llm_when": llm_when})
    except urllib.error.HTTPError as error:
        try:
            detail = json.loads(error.read()).get("detail")
        except ValueError:
            detail = error.reason
        message = detail if isinstance(detail, str) else json.dumps(detail)
        kind = {422: InputError, 503: DatabaseError}.get(error.code, ConfigError)
        raise kind(f"{message} (server {base}, HTTP {error.code})") from None
    except (OSError, ValueError):
        return None
