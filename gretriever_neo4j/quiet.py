"""Model libraries print progress bars and hub warnings that are noise in a CLI or a service.

`request()` (cheap: environment only) is called by the entry points; model loaders call `apply()` right before
they import the heavy libraries, so `gqa --help`, `gqa stats` and `gqa db …` never import transformers.
"""

from __future__ import annotations

import logging
import os

_FLAG = "GQA_QUIET"


def request() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ[_FLAG] = "1"


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
