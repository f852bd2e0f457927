"""Which of the answers the walks rate alike comes first: a person reads the first of a list as *the* answer.

`time_order`: "when was the *last* time the Bruins went to the Stanley Cup" is answered by the finals whose name
says the latest year ("2013 Stanley Cup Finals" before "1941 Stanley Cup Finals"); "first", "earliest" by the
earliest; "in 2012" by the answers whose names say 2012. Only names are read: a graph whose edges carry no dates
(a Freebase CVT's dates are not in WebQSP's evidence) still names seasons, finals and elections by their years.

(The reader then puts first the answers nearest the noun a "what"/"which" question opens with: "what *college* did
X go to", the colleges among the schools; `ZeroShotReader._ordered_as_asked`.)

Pure functions over node texts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from gretriever_neo4j.language import WORDS

YEAR = re.compile(r"(?<!\d)(1[0-9]{3}|20[0-9]{2})(?!\d)")
LATEST_WORDS = WORDS.latest
EARLIEST_WORDS = WORDS.earliest


def years(text: str) -> list[int]:
    """The years a name says ("2000–01 FA Cup": 2000; "Super Bowl XLVII": none)."""
    return [int(y) for y in YEAR.findall(text)]


def time_order(question_tokens: Sequence[str], texts: Sequence[str], candidates: Sequence[int]) -> np.ndarray | None:
    """Per node, a key in [0, 1] by which the `candidates` are ordered in time as the question asks (1 first), or
    None where it asks for no order. A year the question names ("who won the cup in 2011") puts the answers
    naming it first; "last"/"latest" the latest year first; "first"/"earliest" the earliest. Only where two
    candidates or more are given and every one names a year."""
    tokens = set(question_tokens)
    asked = {int(t) for t in tokens if YEAR.fullmatch(t)}
    latest, earliest = bool(tokens & LATEST_WORDS), bool(tokens & EARLIEST_WORDS)
    if not asked and latest == earliest:  # no order asked for, or both ("first ... last")
        return None
    named = {c: years(texts[c]) for c in candidates}
    if len(named) < 2 or not all(named.values()):
        # Some answers name no year ("Super Bowl XLIII" beside "2011 AFC Championship Game"): their order in time
        # is unknown, and putting them last answered WebQSP's "last time the Steelers won" wrong.
        return None
    key = np.zeros(len(texts))
    if asked:
        hits = {c for c, ys in named.items() if asked & set(ys)}
        if not hits or len(hits) == len(named):
            return None
        key[sorted(hits)] = 1.0
        return key
    span = {c: (max(ys) if latest else min(ys)) for c, ys in named.items()}
    low, high = min(span.values()), max(span.values())
    if low == high:
        return None
    for c, y in span.items():
        key[c] = ((y - low) / (high - low) if latest else (high - y) / (high - low))
    return key

