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
    if not epochs:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.info("no training curves: matplotlib is not installed")
        return None
    x = [record.epoch + 1 for record in epochs]
    fig, axis = plt.subplots(figsize=(7, 4))
    axis.plot(x, [record.train_loss for record in epochs], marker="o", label="training loss")
    val = [(e, record.val_loss) for e, record in zip(x, epochs) if record.val_loss is not None]
    if val:
        axis.plot(*zip(*val), marker="o", label="validation loss")
    collapsed = [e for e, record in zip(x, epochs) if getattr(record, "collapse", None)]
    for e in collapsed:
        axis.axvline(e, color="tab:red", alpha=0.25)
    if collapsed:
        axis.plot([], [], color="tab:red", alpha=0.5, label="validation answers collapsed")
    axis.set_xlabel("epoch")
    axis.set_ylabel("loss")
    axis.set_title(title)
    axis.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
