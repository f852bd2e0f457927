"""What reaches a user's terminal: answers and our own messages, not library noise.

`request()` (cheap: environment only) is called by the entry points; model loaders call `apply()` right before
they import the heavy libraries, so `gqa --help`, `gqa stats` and `gqa db …` never import transformers.
`configure_logging()` sends our warnings to stderr, library chatter (the Neo4j driver's retries of transient
errors, deprecation warnings of torch and transformers) to debug, and every error with its traceback to a log
file (`log_file()`), where the log id a user is shown finds it.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import warnings
from pathlib import Path

_FLAG = "GQA_QUIET"
_VERBOSE = "GQA_VERBOSE"
# Loggers of libraries whose warnings are about themselves (retries they made, APIs they will change), not about
# the user's work.
_CHATTY = ("neo4j", "py.warnings", "sentence_transformers", "transformers", "torch", "httpx", "urllib3")


def request() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ[_FLAG] = "1"


def verbose() -> bool:
    return os.environ.get(_VERBOSE, "") not in ("", "0")


def apply() -> None:
    if os.environ.get(_FLAG) != "1":
        return
    logging.getLogger("sentence_transformers").setLevel(logging.ERROR)
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except ImportError:
        pass


def log_file() -> Path:
    from gretriever_neo4j.settings import gqa_home

    return gqa_home() / "logs" / "gqa.log"


def configure_logging(*, verbose_: bool | None = None) -> None:
    """Once per process (the CLI's and the service's entry points)."""
    loud = verbose() if verbose_ is None else verbose_
    root = logging.getLogger()
    if getattr(root, "_gqa_configured", False):
        return
    root._gqa_configured = True
    root.setLevel(logging.DEBUG if loud else logging.INFO)
    terminal = logging.StreamHandler()
    terminal.setLevel(logging.DEBUG if loud else logging.WARNING)
    terminal.setFormatter(_OneLine("%(levelname)s %(name)s: %(message)s"))
    terminal.addFilter(lambda record: not getattr(record, "file_only", False))
    root.addHandler(terminal)
    try:
        path = log_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        keep = logging.handlers.RotatingFileHandler(path, maxBytes=5_000_000, backupCount=3, encoding="utf-8")
        keep.setLevel(logging.INFO)
        keep.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
        root.addHandler(keep)
    except OSError:
        pass  # a read-only home: errors still reach the terminal
    logging.captureWarnings(True)
    for name in ("neo4j.io", "neo4j.pool"):  # every Bolt message, vectors included: too much even for --verbose
        logging.getLogger(name).setLevel(logging.WARNING)
    if not loud:
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        for name in _CHATTY:
            logging.getLogger(name).setLevel(logging.ERROR)


class _OneLine(logging.Formatter):
    """The terminal gets the one-line message; the traceback is for the log file (a copy of the record, so the
    file's handler still sees it)."""

    def format(self, record: logging.LogRecord) -> str:
        if record.exc_info and not verbose():
            record = logging.makeLogRecord({**record.__dict__, "exc_info": None, "exc_text": None})
        return super().format(record)
