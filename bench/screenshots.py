"""Screenshots of the web page for the README: a question asked through a shared address, the evidence view and
the whole-subgraph view, in headless Chromium (Debian's, driven by Playwright).

    python bench/screenshots.py [--graph metaqa] [--question "which person directed the films starred by Ewan McGregor"]
                                [--out docs/screenshots]
Needs Neo4j up with the graph ingested; starts its own `gqa serve`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import httpx
from _common import REPO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", default="metaqa")
    parser.add_argument("--question", default="which person directed the films starred by Ewan McGregor")
    parser.add_argument("--name", default="metaqa_ewan_mcgregor")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("GQA_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "gretriever_neo4j", "serve", "--port", str(port),
                               "--preload", args.graph], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{url}/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        args.out.mkdir(parents=True, exist_ok=True)
        query = urllib.parse.urlencode({"q": args.question, "graph": args.graph})
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 860})
            page.goto(f"{url}/?{query}")
            page.wait_for_selector("#answer-nodes li", timeout=300_000)
            page.wait_for_timeout(500)
            page.screenshot(path=str(args.out / f"{args.name}_evidence.png"))
            page.click("#view-toggle")
            page.wait_for_timeout(500)
            page.screenshot(path=str(args.out / f"{args.name}_whole.png"))
            answers = page.locator("#answer-nodes li .name").all_inner_texts()
            browser.close()
        print(f"{len(answers)} answers: {', '.join(answers[:10])}{' …' if len(answers) > 10 else ''}")
        print(f"wrote {args.out / (args.name + '_evidence.png')} and {args.out / (args.name + '_whole.png')}")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
