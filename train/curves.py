"""Training curves as a picture beside the checkpoint: loss per epoch (training and validation), and where the
validation answers collapse onto one label. matplotlib is imported only here, when a run writes its curves."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)


def write_curves(epochs: Sequence, path: Path, *, title: str = "training") -> Path | None:
    """`epochs`: records with `epoch`, `train_loss`, `val_loss` (None without validation) and `collapse`. Returns
    the PNG's path, or None where matplotlib is missing or nothing was trained yet."""
    series = {"training loss": [record.train_loss for record in epochs]}
    if any(record.val_loss is not None for record in epochs):
        series["validation loss"] = [record.val_loss for record in epochs]
    collapsed = [i + 1 for i, record in enumerate(epochs) if getattr(record, "collapse", None)]
    return write_loss_curves(series, path, title=title, marked=collapsed,
                             marked_label="validation answers collapsed")


def write_loss_curves(series: dict[str, Sequence[float | None]], path: Path, *, title: str = "training",
                      marked: Sequence[int] = (), marked_label: str = "") -> Path | None:
    """One line per named series of per-epoch losses (epochs counted from 1); `marked` epochs get a red band."""
    series = {name: list(values) for name, values in series.items() if values}
    if not series:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.info("no training curves: matplotlib is not installed")
        return None
    fig, axis = plt.subplots(figsize=(7, 4))
    for name, values in series.items():
        points = [(i + 1, v) for i, v in enumerate(values) if v is not None]
        axis.plot(*zip(*points), marker="o", label=name)
    for epoch in marked:
        axis.axvline(epoch, color="tab:red", alpha=0.25)
    if marked:
        axis.plot([], [], color="tab:red", alpha=0.5, label=marked_label)
    axis.set_xlabel("epoch")
    axis.set_ylabel("loss")
    axis.set_title(title)
    axis.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
