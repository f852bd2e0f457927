"""Entity linking's tuned numbers, in one frozen config (relation-path retrieval's are fields of its `PathConfig`).

Each was set by hand on graphs that had been read; `linking` and `naming` explain what each one decides where they
compute with it, and `LINKING` is the one place they are defined.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LinkingTuning:
    # of the nodes a question may mean by a word, which it is taken to mean (`linking.guess`)
    guess_degree: float = 0.1  # per unit of log(1 + edges): the better known
    guess_rank: float = 0.03  # per place down the vector ranking
    fuller_said: float = 0.5  # a fuller name is meant where the question says this share of its content words
    better_known: float = 5.0  # a node this many times better connected is meant instead of an exact short name
    acronym_hits: int = 10  # nodes nearest a word alone among which an acronym's expansion is looked for
    acronym_alone: int = 3  # letters an acronym needs to link by itself ("sf giants" says part of a longer name)
    derived_suffix: int = 4  # the most letters a derived form adds to its word ("japan" / "japanese")


LINKING = LinkingTuning()

__all__ = ["LINKING", "LinkingTuning"]
