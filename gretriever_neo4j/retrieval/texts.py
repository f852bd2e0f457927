"""What a node's or a relation's text says by itself: an opaque id (a way through, never an answer), a number or a
date, a common noun; a relation's name read as words (`humanize_relation`) and its own name (`own_name`)."""

from __future__ import annotations

import re
from functools import cache

from gretriever_neo4j.language import WORDS

OPAQUE_ID = re.compile(r"^[mg]\.[0-9a-z_]+$")
# A user's record key: an event or a loan that carries an n-ary fact ("EXH-2031", "LOAN-0447", "ORD-2024-0193",
# "evt_0042"), letters and a number of three digits or more after a separator, or one padded with a zero. Not a
# model's or a gene's name ("B52", "TRANQ2", "COVID-19", "Boeing 747").
RECORD_ID = re.compile(r"^[A-Za-z]{2,}(?:[-_#:/]\d+)*[-_#:/]\d{3,}$|^[A-Za-z]{2,}[-_#:/]?0\d{2,}$")
VALUE = re.compile(r"^[-+]?\d[\d,.:/ -]*(T[\d:.]+Z?)?$")
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
          r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
# A date as people write it: "12 March 1841", "12th of March 1841", "March 12, 1841", "March 1841"
DATE = re.compile(rf"^(?:{_DAY}(?: of)? {_MONTH},? \d{{1,4}}|{_MONTH} {_DAY},? \d{{1,4}}|{_MONTH},? \d{{3,4}})$",
                  re.IGNORECASE)


def is_opaque(text: str) -> bool:
    """A node text that is an id, not a name (Freebase CVT / mid, a user's record key): a way through, never an
    answer."""
    text = text.strip()
    return bool(OPAQUE_ID.match(text) or RECORD_ID.match(text))


def is_a_value(text: str) -> bool:
    """A node text that is a number or a date ("1983", "1901-09-14", "7.5", "12 March 1841"), not a name."""
    text = text.strip()
    return bool(VALUE.match(text) or DATE.match(text))


def is_a_common_noun(text: str) -> bool:
    """A node text written all in lower case ("indie rock", "bass guitar", "new york city" as a tag): a word for
    a kind of thing, not the proper name a "who" question asks for."""
    return any(c.isalpha() for c in text) and not any(c.isupper() for c in text)


HUMANIZED_VERSION = 5  # bumped when `humanize_relation` reads a name differently: embedded names are cached by it
IRI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")  # `http://dbpedia.org/ontology/birthPlace`
CURIE = re.compile(r"^[A-Za-z][\w-]*:(?=[A-Za-z_])")  # `schema:birthPlace`, `lore:memberOfFaction`


# A spreadsheet's column headers as relation names ("pob", "mgr", "cap."), read in full where the dictionary does not
# know the word or where it is written with a dot
ABBREVIATIONS = WORDS.relation_abbreviations
LAST_PART = re.compile(r"\.(\w+)$")  # `film.film.directed_by`: `directed_by`
DOTTED = re.compile(r"\b([A-Za-z]+)\.(?=[\s_]|$)")  # "cap." as a word, not Freebase's "people.person"


def spelled_out(part: str, dotted: set[str]) -> str:
    """`part` in full where it is one of `ABBREVIATIONS` and written with a dot (in `dotted`) or no dictionary word;
    else as it is."""
    word = part.lower()
    if word not in ABBREVIATIONS:  # every word of every relation name passes here: the dictionary only for these
        return part
    from lemminflect import getAllLemmas

    return ABBREVIATIONS[word] if word in dotted or not getAllLemmas(word) else part


JOINING_WORDS = WORDS.joining  # what a relation name may run together with others ("athleteplaysforteam")


@cache
def segmented(word: str) -> str:
    """A word run together from several, as NELL's relation names are ("athleteplaysforteam", "teamcoach"), written
    apart: "athlete plays for team". Only a lower-case word of five letters
    or more that the dictionary does not know, and only where every part is a word it knows (or a function word)
    of two letters or more ("a" alone): "usnris", "honouriam", "canoodled" stay as they are. The split is
    wordsegment's (word frequencies of a large English corpus)."""
    if len(word) < 5 or not word.isalpha() or not word.islower():
        return word
    from lemminflect import getAllLemmas

    if getAllLemmas(word):
        return word
    import wordsegment

    if not wordsegment.UNIGRAMS:
        wordsegment.load()
    parts = wordsegment.segment(word)
    known = all(p in JOINING_WORDS or (len(p) >= 2 and getAllLemmas(p)) for p in parts)
    return " ".join(parts) if len(parts) > 1 and known else word


def local_name(text: str) -> str:
    """A relation's name without its RDF namespace or prefix (`IRI`, `CURIE`); other names as they are."""
    if IRI.match(text):
        return re.split(r"[/#]", text.rstrip("/#"))[-1] or text
    return CURIE.sub("", text, count=1)


def humanize_relation(text: str, whole: bool = True) -> str:
    """"directed_by" -> "directed by", "cooked-by-method" -> "cooked by method"; Freebase
    "people.person.spouse_s" -> "person spouse s" (the domain, its first part, repeats the type's meaning and only
    adds noise to the embedding); an RDF name's namespace or prefix goes too ("schema:birthPlace",
    "http://dbpedia.org/ontology/birthPlace" -> "birth Place": "schema", "dbpedia", "org" would read as words of
    every relation); a column header's abbreviations are spelled out ("pob" -> "place of birth", "cap." ->
    "capacity": `ABBREVIATIONS`); a name run together as one word is written apart where it is the `whole` name
    ("athleteplaysforteam": `segmented`), not where it is a part of one ("location.location.containedby")."""
    text = local_name(text)
    parts = [p for p in re.split(r"[._/:-]+|(?<=[a-z])(?=[A-Z])", text.replace("_", " ")) if p.strip()]
    if text.count(".") >= 2 and len(parts) >= 3:
        parts = parts[1:]
    dotted = {m.lower() for m in DOTTED.findall(text)}
    words = [spelled_out(w, dotted) for w in " ".join(parts).split()]  # abbreviations: `ABBREVIATIONS`
    if len(words) == 1 and whole:  # a name run together as one word (NELL's); a part of a name stays as it is
        words = segmented(words[0]).split()
    return " ".join(words) or text


def own_name(relation_text: str) -> str:
    """A relation's own name, humanized: a Freebase name's part after its last dot (its domain and type say
    nothing of what this relation is), an RDF name's local name."""
    name = local_name(relation_text)
    last = LAST_PART.search(name)  # not "Population (approx.)" or "cap.": their dot ends a word, no domain
    if last:
        return humanize_relation(last.group(1), whole=False)
    if name.rstrip().endswith(".") and " " in name.strip():  # a sentence's full stop (a misparsed line): no name
        return ""
    return humanize_relation(name)
