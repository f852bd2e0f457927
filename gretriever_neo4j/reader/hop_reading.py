"""The hop reader: how many hops a question asks (one, two, three or more), read from its words.

The reader's commonest miss on a graph it never saw is a multi-hop question answered by a shorter walk: the step
left out is named only by a paraphrase ("who is the father of X's teacher" for `mentorOf> father>`), so the one-step
walk whose relation the words do name wins. How many steps a question asks is a property of its phrasing, not of a
graph's vocabulary, so it can be learned across many graphs and carried to a new one (docs/learned-reader.md).

The model is MiniLM with low-rank adapters and a linear head over its unit sentence vector (times `scale`),
trained across graphs by `train.hop_reader` on the masked questions of `collect` files, each labelled with the
hop count of its answering walk. It is stored as a walk encoder is (the adapters, `reader.walk_encoder`'s files,
merged into MiniLM at load and run through ONNX Runtime) with its head (`HEAD_FILE`) and settings
(`CONFIG_FILE`) beside them. The reader reads it as the walk feature `hop_reading`: the log of the probability that
the question asks the walk's hop count.

Beside the hop head the folder may hold a value head (`VALUE_HEAD_FILE`, trained by `train.value_head`): one
logistic unit over the same vector, the probability that the question asks for a number or a date. The reader reads
it as the walk feature `value_reading`, so that "which company puts out X" is not answered by X's release year,
nor "what is X's release year" by its publisher, on a graph whose words no rule knows.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.settings import from_known_fields

CONFIG_FILE = "hop_reader.json"
HEAD_FILE = "hop_head.safetensors"
VALUE_HEAD_FILE = "value_head.safetensors"
HOPS = 3  # the classes: 1, 2, and 3 or more named hops


@dataclass(frozen=True)
class HopReaderConfig:
    """`scale`: what the unit question vector is multiplied by before the head (a logit scale); `floor`: added to
    a probability before its log, so that a sure head lowers a walk of another hop count without ruling it out;
    `training`: how it was trained (a record)."""

    scale: float = 10.0
    floor: float = 1e-3
    training: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("scale", "floor"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    math.isfinite(value) and value > 0):
                raise ConfigError(f"hop reader: {name} must be a positive number, got {value!r}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HopReaderConfig:
        return from_known_fields(cls, data, "hop reader config")


class HopReader:
    """P(1, 2, 3+ hops) of a masked question. Thread-safe as its encoder is (`WalkEncoder`: one lock, a cache)."""

    def __init__(self, encoder, weight: np.ndarray, bias: np.ndarray, config: HopReaderConfig,
                 value_head: tuple[np.ndarray, np.ndarray] | None = None):
        """`encoder`: a `walk_encoder.WalkEncoder` (its unit vectors are read); `weight` (HOPS, dimension) and
        `bias` (HOPS,): the head; `value_head`: (weight (dimension,), bias ()) of the value head, or None."""
        if weight.shape[0] != HOPS or bias.shape != (HOPS,):
            raise ConfigError(f"hop reader: a head of {HOPS} classes expected, got {weight.shape} / {bias.shape}")
        if value_head is not None and (value_head[0].shape != weight.shape[1:] or np.shape(value_head[1]) != ()):
            raise ConfigError(f"hop reader: a value head of {weight.shape[1:]} weights and one bias expected, got "
                              f"{value_head[0].shape} / {np.shape(value_head[1])}")
        self.encoder, self.weight, self.bias, self.config = encoder, weight, bias, config
        self.value_head = value_head

    @classmethod
    def load(cls, folder: Path, onnx: bool | Path = True) -> HopReader:
        """The hop reader `write` wrote into `folder`; `onnx` as `WalkEncoder`'s."""
        from safetensors import SafetensorError
        from safetensors.numpy import load_file

        from gretriever_neo4j.reader.walk_encoder import WalkEncoder

        try:
            config = HopReaderConfig.from_dict(json.loads((folder / CONFIG_FILE).read_text()))
            head = load_file(str(folder / HEAD_FILE))
        except (OSError, ValueError, SafetensorError) as error:
            raise ConfigError(f"cannot read the hop reader in {folder}: {error}") from error
        if "weight" not in head or "bias" not in head:
            raise ConfigError(f"the hop reader in {folder} has no head (weight, bias)")
        value_head = None
        if (folder / VALUE_HEAD_FILE).exists():
            try:
                value = load_file(str(folder / VALUE_HEAD_FILE))
                value_head = (value["weight"].astype(np.float64).reshape(-1),
                              value["bias"].astype(np.float64).reshape(()))
            except (OSError, ValueError, KeyError, SafetensorError) as error:
                raise ConfigError(f"cannot read the value head in {folder}: {error}") from error
        return cls(WalkEncoder.load(folder, onnx), head["weight"].astype(np.float64),
                   head["bias"].astype(np.float64), config, value_head)

    def probabilities(self, masked: str) -> np.ndarray:
        """(HOPS,) the probability that the masked question asks 1, 2, 3 or more hops."""
        logits = self.weight @ (self.config.scale * self.encoder.vectors([masked])[0]) + self.bias
        logits = np.exp(logits - logits.max())
        return logits / logits.sum()

    def value_probability(self, masked: str) -> float | None:
        """The probability that the masked question asks for a number or a date; None without a value head."""
        if self.value_head is None:
            return None
        logit = float(self.value_head[0] @ (self.config.scale * self.encoder.vectors([masked])[0]) + self.value_head[1])
        return 1.0 / (1.0 + math.exp(-max(min(logit, 50.0), -50.0)))


def write(folder: Path, encoder_config, encoder_state: dict, head: dict[str, np.ndarray],
          config: HopReaderConfig) -> None:
    """A hop reader into `folder`: its adapters as `walk_encoder.write_saved` writes them (`encoder_config`,
    `encoder_state`), its head (`weight`, `bias`, float32) and `config`."""
    from safetensors.numpy import save_file

    from gretriever_neo4j.reader.walk_encoder import write_saved

    write_saved(encoder_config, encoder_state, folder)
    save_file({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in head.items()}, str(folder / HEAD_FILE))
    (folder / CONFIG_FILE).write_text(json.dumps(config.to_dict(), indent=1) + "\n")


def write_value_head(folder: Path, weight: np.ndarray, bias: float, training: dict[str, Any]) -> None:
    """The value head into a hop reader's `folder` (float32, `training` a record in the file's metadata)."""
    from safetensors.numpy import save_file

    save_file({"weight": np.ascontiguousarray(weight, dtype=np.float32).reshape(-1),
               "bias": np.asarray([bias], dtype=np.float32)}, str(folder / VALUE_HEAD_FILE),
              metadata={"training": json.dumps(training)})


def walk_hops(features: np.ndarray) -> np.ndarray:
    """Each walk's class (1, 2, `HOPS`) from its feature rows: its named hops (`extra_hops` + 1), capped."""
    from gretriever_neo4j.reader.signature_weights import FEATURES

    return np.minimum(features[:, list(FEATURES).index("extra_hops")] + 1, HOPS).astype(int)


def add_hop_reading(reader: HopReader, table, masked: str) -> None:
    """Fills the feature `hop_reading` of `table` (a `coverage.SignatureTable`) in place, for every walk: the log
    of the probability (plus the floor) that the masked question asks the walk's hop count."""
    from gretriever_neo4j.reader.signature_weights import FEATURES

    if not len(table.features):
        return
    probability = reader.probabilities(masked)
    table.features[:, list(FEATURES).index("hop_reading")] = np.log(
        probability[walk_hops(table.features) - 1] + reader.config.floor)


def add_value_reading(reader: HopReader, table, masked: str, value_ends: set[int]) -> None:
    """Fills the feature `value_reading` of `table` in place: for a walk whose end nodes are all numbers or dates
    (`value_ends`, signature ids) the log of the probability that the question asks for one, for any other walk
    the log of the probability that it does not (each plus the floor). Nothing without a value head."""
    from gretriever_neo4j.reader.signature_weights import FEATURES

    probability = reader.value_probability(masked) if len(table.features) else None
    if probability is None:
        return
    ends_on_values = np.asarray([int(s) in value_ends for s in table.used], dtype=bool)
    table.features[:, list(FEATURES).index("value_reading")] = value_reading(probability, ends_on_values,
                                                                              reader.config.floor)


def value_reading(probability: float, ends_on_values: np.ndarray, floor: float) -> np.ndarray:
    """The feature `value_reading` of walks that end on values only (`ends_on_values`, bool per walk) or not, for a
    question asking for a value with `probability`: log(P + floor), log(1 − P + floor)."""
    return np.log(np.where(ends_on_values, probability, 1.0 - probability) + floor)
