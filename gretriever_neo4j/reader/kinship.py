"""Family words, for the zero-shot reader over a user's family graph: a kinship word the graph has no relation for
is a path over the ones it has, and a relation said once per sex ("is the father of", "is the mother of") or once
per pair ("married", stored one way per couple) is one relation to a question that does not ask which.

- `spell_out_kinship`: "X's grandparents" asks for X's parents' parents, "X's siblings" for the children of X's
  parents, "X's father-in-law" for X's spouse's father: the question is rewritten so that its words name the hops
  (a graph of "parent of" / "married to" edges has no `grandparent` relation, and the embedder rates
  "grandparents" nearest the one-hop `parent`);
- `kin_steps`: how many steps along family relations the spelled-out question asks for (two for "parents of
  parents"): a walk of that many family steps is what it asks, not the one-hop walk the same words also name;
- `sex_chain`: the sex the question asks of the person at each family step ("X's mum's husband": a woman, then a
  man), so that of the people a walk along sexless relations (`parents`, `child`) reaches, those of the sex asked
  answer (`constraints.sexed`);
- `merged_relations`: the relations a question cannot tell apart: the sexes of one role where the question names
  neither ("parents": `is the father of` and `is the mother of`, whose answers together are the parents) and the two
  directions of a relation that holds both ways ("married", "sibling of", "rival of").

Pure functions of texts (lemminflect's lemmas).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gretriever_neo4j.language import WORDS
from gretriever_neo4j.retrieval.naming import family_steps, is_kin, word_lemmas
from gretriever_neo4j.retrieval.texts import own_name

# What a kinship word is in the graph's words: the hops, nearest to X first.
SPELLED_OUT = WORDS.spelled_out
TOKENS = re.compile(r"[\w'-]+|[^\w\s]")  # words (with their possessive and hyphens) and punctuation
IN_LAW = re.compile(r"\b(father|mother|parent|son|daughter)s?[- ]in[- ]laws?\b")
# said in the possessive's order, nearest to X first: "X's father-in-law" is X's spouse's father
IN_LAW_SPELLED = WORDS.in_law_spelled
# A family word said by sex, and the role it is one sex of ("father" -> parent).
SEXES = WORDS.sexes
# A relation that holds both ways, whichever way the graph stored each pair.
BOTH_WAYS = WORDS.both_ways
LINEAGE = WORDS.lineage  # "paternal" grandfather: the first step's sex
KIN_PHRASES = WORDS.kin_phrases


def spell_out_kinship(masked_question: str, relation_texts: Sequence[str]) -> str:
    """The question with its kinship words that no relation of the graph says spelled out as hops: "who were X's
    grandparents" -> "who were X's parents of parents"; "the brothers and sisters of X" -> "the children of the
    same parents of X"; "X's father-in-law" -> "X's spouse's father". A graph with a `sibling of` relation is
    asked "siblings" as it is."""
    from gretriever_neo4j.reader.wording import same_stems

    def unnamed(word: str) -> bool:
        return not same_stems([word], relation_texts).any()

    text = masked_question.lower()
    if unnamed("law"):  # a graph with a `father-in-law` relation is asked as it is
        text = IN_LAW.sub(lambda m: IN_LAW_SPELLED[m.group(1)], text)
    words, out = TOKENS.findall(text), []
    for word in words:
        spelled = next((SPELLED_OUT[lemma] for lemma in word_lemmas(word) if lemma in SPELLED_OUT), None)
        if spelled is not None and not unnamed(word):
            spelled = None
        if spelled is not None and len(out) >= 2 and out[-1] in ("and", "or") and out[-2].endswith("parents"):
            out.pop()  # "brothers and sisters": one kin, said once
            continue
        out.append(spelled if spelled is not None else word)
    return " ".join(out) if out != TOKENS.findall(masked_question.lower()) else masked_question


def kin_steps(words: Sequence[str]) -> int:
    """How many family hops the (spelled-out) question's content words ask for: its family words ("parents of
    parents": 2; "spouse" said with "married": one hop still), 0 where fewer than two."""
    count = sum(1 for w in words if is_kin(w))
    return count if count >= 2 else 0


def _neutral(lemma: str) -> str:
    return SEXES.get(lemma, lemma)


def merged_relations(relation_texts: Sequence[str], question_words: Sequence[str]) -> tuple[list[int], set[int]]:
    """Per relation, the relation it is one with for this question (`is the mother of` -> `is the father of` where
    the question says neither "father" nor "mother"), and the relations whose two directions are one
    (`BOTH_WAYS`)."""
    said = {lemma for w in question_words for lemma in word_lemmas(w)}
    keys: dict[tuple[str, ...], int] = {}
    same = []
    for r, text in enumerate(relation_texts):
        words = own_name(text).lower().split()
        key = []
        for word in words:
            lemmas = word_lemmas(word) or frozenset({word})
            sexed = next((lemma for lemma in lemmas if lemma in SEXES), None)
            # a sex the question asks for keeps its relation apart ("who is X's father")
            key.append(_neutral(sexed) if sexed is not None and sexed not in said else word)
        # only a relation said by sex is one with another (two relations of one name stay two: a roster's and a
        # season's statistics' `team`)
        same.append(keys.setdefault(tuple(key), r) if key != words else r)
    both = {r for r, text in enumerate(relation_texts)
            if any(word_lemmas(w) & BOTH_WAYS for w in own_name(text).lower().split())}
    return same, both


def sex_chain(masked_question: str) -> str:
    """The sex the question asks of the person at each family step from X, nearest X first ("M", "F" or "-"):
    "where was X's mum's husband born" -> "FM", "the job of the dad of X's other half" -> "-M" (the words after
    X's possessive in their order, then those before X from the nearest), "X's paternal grandfather" -> "MM".
    Words joined by "and" / "or" are one step ("brothers and sisters": either sex). Empty where the question asks
    no sex, or names X not once."""
    text = IN_LAW.sub(lambda m: f"{m.group(1)}-in-law", masked_question.lower())
    for phrase, kin in KIN_PHRASES.items():
        text = re.sub(rf"\b{re.escape(phrase)}\b", kin, text)
    before, after, side = [], [], None
    lineage, said_with_and, greats = None, False, 0
    for token in TOKENS.findall(text):
        if re.sub(r"'s?$", "", token) == "x":
            if side is not None:
                return ""
            side = after
            lineage = None
            continue
        items = after if side is not None else before
        if token in LINEAGE:
            lineage = LINEAGE[token]
            continue
        if token in ("great", "great-"):
            greats += 1
            continue
        if token in ("and", "or") and items and items[-1] is not None:
            said_with_and = True
            continue
        steps = family_steps(token)
        if steps is None:
            if items and items[-1] is not None and not token.isalnum():
                items.append(None)  # punctuation ends a run of family words
            said_with_and = False
            continue
        if greats:
            steps, greats = "-" * greats + steps, 0
        if lineage is not None:
            steps, lineage = lineage + steps[1:], None
        if said_with_and and items and items[-1] is not None and len(items[-1]) == len(steps):
            items[-1] = "".join(a if a == b else "-" for a, b in zip(items[-1], steps))
        elif said_with_and:
            return ""
        else:
            items.append(steps)
        said_with_and = False
    if side is None:
        return ""
    chain = "".join(i for i in after if i) + "".join(i for i in reversed(before) if i)
    return chain if chain.strip("-") else ""
