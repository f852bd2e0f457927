"""Generation that can only say what the graph holds: node names (or labels), '|'-separated, each at most once.

The allowed outputs form the grammar `item ('|' item)* EOS` over a token trie of the items, as in constrained
entity decoding (GENRE, De Cao et al. 2021). A `TrieConstraint` replays the tokens generated so far to find its
place in the grammar and returns the tokens allowed next; `ConstrainedLogitsProcessor` masks every other token
for `transformers`' `generate`.

Reader-informed decoding: each item may carry a potential (the reader's log-odds for that node). A token is
then also scored by `weight * potential(state it leads to)`, where a trie node's potential is the best of the
items still reachable below it, the separator's is the best item not yet said, and stopping's is
`stop_potential` (the log-odds of the reader's answer threshold). Greedy decoding thus follows the LLM where the
reader is unsure and the reader where the LLM is, and with weight 0 it is plain constrained decoding.

With `must_say_above_stop`, ending is not allowed while an item whose potential reaches `stop_potential` is
unsaid (and `max_items` leaves room): the reader's confident answers are all said, the LLM orders them and
decides about the doubtful ones.

Items are tokenized on their own, so a concatenation decodes to exactly "A|B" whatever the tokenizer would do
with the whole string.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from ..errors import InputError

SEPARATOR = "|"


@dataclass
class _TrieNode:
    children: dict[int, _TrieNode] = field(default_factory=dict)
    items: list[int] = field(default_factory=list)  # items whose tokens pass through (or end at) this node
    ends: int | None = None  # the item whose last token this node is


class TrieConstraint:
    """The grammar over one sample's items. `items` are token-id sequences; duplicates collapse into one."""

    def __init__(self, items: Sequence[Sequence[int]], separator: Sequence[int], eos: int | Sequence[int], *,
                 potentials: Sequence[float] | None = None, weight: float = 0.0, stop_potential: float = 0.0,
                 max_items: int | None = None, must_say_above_stop: bool = False):
        if not separator:
            raise InputError("the separator has no tokens", field="separator")
        self.items = [tuple(int(t) for t in item) for item in items if len(item)]
        if not self.items:
            raise InputError("constrained decoding needs at least one non-empty item", field="items")
        self.separator = tuple(int(t) for t in separator)
        self.eos = [int(eos)] if isinstance(eos, int) else [int(t) for t in eos]
        self.potentials = [0.0] * len(self.items) if potentials is None else [float(p) for p in potentials]
        if len(self.potentials) != len(self.items):
            raise InputError("one potential per item is needed", field="potentials")
        self.weight = float(weight)
        self.stop_potential = float(stop_potential)
        self.max_items = max_items
        self.must_say_above_stop = must_say_above_stop
        self.root = _TrieNode()
        for index, item in enumerate(self.items):
            node = self.root
            node.items.append(index)
            for token in item:
                node = node.children.setdefault(token, _TrieNode())
                node.items.append(index)
            if node.ends is None:
                node.ends = index

    # -- replay --------------------------------------------------------------------------------------
    def state(self, generated: Sequence[int]) -> tuple[str, _TrieNode | int, list[int]]:
        """Where `generated` leaves the grammar: ("item", trie node, items said), ("sep", position in the
        separator, items said) or ("done", 0, items said) after EOS; items said are in order. Raises
        InputError on a token the grammar does not allow."""
        said: list[int] = []
        mode, node, position = "item", self.root, 0
        for token in generated:
            token = int(token)
            if mode == "done":
                break
            if mode == "item":
                child = node.children.get(token)
                if child is not None and any(i not in said for i in child.items):
                    node = child
                    continue
                if node.ends is None or node.ends in said:
                    raise InputError(f"token {token} leaves the allowed items", field="generated")
                said.append(node.ends)
                if token in self.eos:
                    mode = "done"
                elif token == self.separator[0]:
                    mode, position = ("sep", 1) if len(self.separator) > 1 else ("item", 0)
                    node = self.root
                else:
                    raise InputError(f"token {token} after an item is neither '|' nor EOS", field="generated")
            else:  # inside a multi-token separator
                if token != self.separator[position]:
                    raise InputError(f"token {token} breaks the separator", field="generated")
                position += 1
                if position == len(self.separator):
                    mode, node = "item", self.root
        if mode == "item":
            return "item", node, said
        if mode == "sep":
            return "sep", position, said
        return "done", 0, said

    def _best(self, item_indices, said: Sequence[int]) -> float:
        open_items = [self.potentials[i] for i in item_indices if i not in said]
        return max(open_items) if open_items else -math.inf

    def allowed(self, generated: Sequence[int]) -> dict[int, float]:
        """Allowed next tokens with their potentials (the bias is `weight *` these)."""
        mode, where, said = self.state(generated)
        if mode == "done":
            return {self.eos[0]: 0.0}
        if mode == "sep":
            return {self.separator[where]: 0.0}
        node = where
        out: dict[int, float] = {}
        for token, child in node.children.items():
            best = self._best(child.items, said)
            if best > -math.inf:
                out[token] = best
        if node.ends is not None and node.ends not in said:
            said_after = said + [node.ends]
            remaining = self._best(range(len(self.items)), said_after)
            room = self.max_items is None or len(said_after) < self.max_items
            if remaining > -math.inf and room:
                out.setdefault(self.separator[0], remaining)
            if not (self.must_say_above_stop and room and remaining >= self.stop_potential):
                for eos in self.eos:
                    out[eos] = self.stop_potential
        return out

    def decode_items(self, generated: Sequence[int]) -> list[int]:
        """Indices of the items `generated` says, in order; an item cut off by the length limit right at its
        end counts, one cut off inside does not. Tokens after EOS are ignored."""
        tokens = [int(t) for t in generated]
        for position, token in enumerate(tokens):
            if token in self.eos:
                tokens = tokens[:position + 1]
                break
        mode, where, said = self.state(tokens)
        if mode == "item" and where.ends is not None and where.ends not in said:
            said = said + [where.ends]
        return said


class ConstrainedLogitsProcessor:
    """A `transformers` logits processor applying one `TrieConstraint` per batch row. With `inputs_embeds`,
    `generate` hands it only the tokens generated so far, which is what the constraints replay."""

    def __init__(self, constraints: Sequence[TrieConstraint | None], prompt_length: int = 0):
        self.constraints = list(constraints)
        self.prompt_length = prompt_length

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        out = torch.full_like(scores, -math.inf)
        for row, constraint in enumerate(self.constraints):
            if constraint is None:
                out[row] = scores[row]
                continue
            generated = input_ids[row, self.prompt_length:].tolist()
            allowed = constraint.allowed(generated)
            tokens = torch.tensor(list(allowed), dtype=torch.long, device=scores.device)
            bias = torch.tensor([constraint.weight * p for p in allowed.values()], dtype=scores.dtype,
                                device=scores.device)
            out[row, tokens] = scores[row, tokens] + bias
        return out


def item_token_ids(tokenizer, names: Sequence[str]) -> list[list[int]]:
    return [list(ids) for ids in tokenizer(list(names), add_special_tokens=False).input_ids]


def separator_ids(tokenizer) -> list[int]:
    return list(tokenizer(SEPARATOR, add_special_tokens=False).input_ids)
