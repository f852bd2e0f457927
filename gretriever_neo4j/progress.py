"""One progress type for every long piece of work (ingest, linking, downloads, training, evaluation).

The library tells an `OnProgress` callback what it is doing; only the CLI (rich bars) and the benchmarks decide
how to show it. `stage` names the work ("records", "link", "download", "labels", "epoch", …), `done`/`total`
count its units where they are counted, `info` carries the stage's own numbers (loss, nodes written, …).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Progress:
    stage: str
    done: int | None = None
    total: int | None = None
    info: Mapping[str, Any] = field(default_factory=dict)


OnProgress = Callable[[Progress], None]


def notify(on_progress: OnProgress | None, stage: str, done: int | None = None, total: int | None = None,
           **info: Any) -> None:
    """Tell `on_progress` (when there is one) about `stage`."""
    if on_progress is not None:
        on_progress(Progress(stage, done, total, info))
