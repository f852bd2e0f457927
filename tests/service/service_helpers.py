"""A real `gqa serve` subprocess for the service tests."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "gretriever_neo4j" / "samples" / "webqsp_sample.jsonl"
FRANKLIN = "what else did ben franklin invent?"
INVENTIONS = {"Lightning rod", "Bifocals", "Glass harmonica", "Franklin stove"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, env: dict, *args: str, host: str = "127.0.0.1", port: int | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen([sys.executable, "-m", "gretriever_neo4j", "serve", "--host", host, "--port",
                                         str(self.port), *args], env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)

    def wait(self, timeout: float = 180) -> Server:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"server exited: {self.process.stderr.read()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.3)
        raise AssertionError("server did not start")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


