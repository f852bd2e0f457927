"""The words gqa reads English by, loaded from data: `english.toml` (every list once, named by its part in a
question) and the schema profiles of `profiles.toml` (Freebase's words).

The retrieval and the reader take each word list from `WORDS`, a frozen `Words`. Adding a word is an edit of the
data, not of the code that reads it; the tests of the reader say what each list does. A list missing from the data,
or a key the loader does not know, is an error naming the file and the key, so a typo cannot silently empty a list.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType

from gretriever_neo4j.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
ENGLISH = HERE / "english.toml"
PROFILES = HERE / "profiles.toml"

Family = frozenset[str]


@dataclass(frozen=True)
class Words:
    """Every word list, typed as its readers use it (sets to test membership, tuples where order decides)."""

    # function words
    stop: frozenset[str]
    naming_function_words: frozenset[str]
    joining: frozenset[str]
    articles: frozenset[str]
    prepositions: frozenset[str]
    copulas: frozenset[str]
    auxiliary_openers: frozenset[str]
    auxiliaries: frozenset[str]
    relatives: frozenset[str]
    requests: frozenset[str]
    # questions
    who: frozenset[str]
    where: frozenset[str]
    when: frozenset[str]
    wh_determiners: frozenset[str]
    wh_pronouns: frozenset[str]
    question_words: frozenset[str]
    # kinds
    kind_nouns: frozenset[str]
    category_nouns: frozenset[str]
    class_names: frozenset[str]
    name_nouns: frozenset[str]
    # what X is, where X is from
    identity_word: str
    identity_what: frozenset[str]
    role_word: str
    origin_word: str
    origin_where_words: frozenset[str]
    coming: frozenset[str]
    # places and times
    containers: frozenset[str]
    place_kinds: frozenset[str]
    located: frozenset[str]
    place_scale: tuple[tuple[str, ...], ...]
    place_prototypes: tuple[str, ...]
    time_words: frozenset[str]
    latest: frozenset[str]
    earliest: frozenset[str]
    # relations named in other words than their own
    families: tuple[Family, ...]
    converse_verbs: frozenset[str]
    inverse_roles: tuple[tuple[Family, Family], ...]
    both_ways: frozenset[str]
    sharing: frozenset[str]
    kin: frozenset[str]
    sexes: Mapping[str, str]
    spelled_out: Mapping[str, str]
    in_law_spelled: Mapping[str, str]
    sexed_steps: Mapping[str, str]
    lineage: Mapping[str, str]
    kin_phrases: Mapping[str, str]
    sex_relations: frozenset[str]
    sex_names: Mapping[str, str]
    # names and relation names
    name_abbreviations: Mapping[str, str]
    generational: frozenset[str]
    relation_abbreviations: Mapping[str, str]
    idioms: tuple[tuple[re.Pattern[str], str], ...]
    # questions made from a graph, and an LLM's answers
    wrappers: tuple[str, ...]
    forward_step: tuple[str, ...]
    backward_step: tuple[str, ...]
    non_entity_answers: frozenset[str]
    filler_words: frozenset[str]
    filler_ids: frozenset[str]


class _Reader:
    """Takes the data's keys one by one, so that what is left over at the end is a key nobody reads."""

    def __init__(self, data: dict, source: Path):
        self.data = {section: dict(table) if isinstance(table, dict) else table for section, table in data.items()}
        self.source = source

    def raw(self, section: str, key: str | None = None):
        table = self.data.get(section)
        if table is None:
            raise ConfigError(f"{self.source}: no [{section}] table")
        if key is None:
            del self.data[section]
            return table
        if key not in table:
            raise ConfigError(f"{self.source}: [{section}] has no '{key}'")
        return table.pop(key)

    def words(self, section: str, key: str) -> tuple[str, ...]:
        value = self.raw(section, key)
        words = tuple(value.split()) if isinstance(value, str) else tuple(value)
        if not words or not all(isinstance(w, str) and w for w in words):
            raise ConfigError(f"{self.source}: [{section}] '{key}' must be a list of words")
        return words

    def set(self, section: str, key: str) -> frozenset[str]:
        return frozenset(self.words(section, key))

    def text(self, section: str, key: str) -> str:
        value = self.raw(section, key)
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{self.source}: [{section}] '{key}' must be a word")
        return value

    def mapping(self, section: str, key: str | None = None) -> Mapping[str, str]:
        value = self.raw(section, key)
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ConfigError(f"{self.source}: [{section}]{f' {key!r}' if key else ''} must map words to words")
        return MappingProxyType(dict(value))

    def nested(self, section: str, key: str, depth: int = 1) -> list:
        """A list of lists of words (`depth` 1: families, the place scale), or of pairs of them (2: roles)."""
        value = self.raw(section, key)
        if not _words_at(value, depth):
            shape = "lists of words" if depth == 1 else "pairs of lists of words"
            raise ConfigError(f"{self.source}: [{section}] '{key}' must be a list of {shape}")
        return value

    def left_over(self) -> None:
        for section, table in self.data.items():
            keys = [k for k in table] if isinstance(table, dict) else []
            if not isinstance(table, dict) or keys:
                raise ConfigError(f"{self.source}: [{section}] {', '.join(map(repr, keys))}: not a word list gqa reads")


def _words_at(value, depth: int) -> bool:
    """Whether `value` is a non-empty list of words (`depth` 0), or of such lists `depth` levels down (pairs of them
    at the last level above words where `depth` is 2)."""
    if not isinstance(value, list) or not value:
        return False
    if depth == 0:
        return all(isinstance(w, str) and w for w in value)
    if depth == 2 and not all(isinstance(pair, list) and len(pair) == 2 for pair in value):
        return False
    return all(_words_at(inner, depth - 1) for inner in value)


def _idioms(entries: list, source: Path) -> tuple[tuple[re.Pattern[str], str], ...]:
    idioms = []
    for i, entry in enumerate(entries, 1):
        unknown = set(entry) - {"pattern", "plain", "ignore_case"}
        if unknown or not isinstance(entry.get("pattern"), str) or not isinstance(entry.get("plain"), str):
            raise ConfigError(f"{source}: idiom {i} needs 'pattern' and 'plain' (and may say 'ignore_case')")
        try:
            pattern = re.compile(entry["pattern"], re.IGNORECASE if entry.get("ignore_case") else 0)
        except re.error as error:
            raise ConfigError(f"{source}: idiom {i}: {error}") from None
        idioms.append((pattern, entry["plain"]))
    return tuple(idioms)


def _with_profiles(data: dict, profiles: dict, source: Path) -> dict:
    """`data` with every profile's words added: `[<profile>.families]` to the family holding the key's word, any
    other `[<profile>.<section>]` to that section's lists."""
    for name, sections in profiles.items():
        for section, additions in sections.items():
            for key, words in additions.items():
                if not _words_at(words, 0):
                    raise ConfigError(f"{source}: [{name}.{section}] '{key}' must be a list of words")
                if section == "families":
                    families = data["relations"]["families"]
                    holding = [f for f in families if key in f]
                    if not holding:
                        raise ConfigError(f"{source}: [{name}.families] '{key}': no family holds that word")
                    holding[0].extend(words)
                elif isinstance(data.get(section), dict) and isinstance(data[section].get(key), list) and all(
                        isinstance(w, str) for w in data[section][key]):
                    data[section][key] = list(data[section][key]) + list(words)
                else:
                    raise ConfigError(f"{source}: [{name}.{section}] '{key}': no such word list")
    return data


def _toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: {error}") from None


def load(path: Path = ENGLISH, profiles: Path | None = PROFILES) -> Words:
    """The word lists of `path`, with the profiles of `profiles` added (None: none)."""
    data = _toml(path)
    if profiles is not None:
        data = _with_profiles(data, _toml(profiles), profiles)
    r = _Reader(data, path)
    families = r.nested("relations", "families")
    inverse_roles = r.nested("relations", "inverse_roles", depth=2)
    scale = r.nested("places", "scale")
    words = Words(
        stop=r.set("function", "stop"),
        naming_function_words=r.set("function", "naming"),
        joining=r.set("function", "joining"),
        articles=r.set("function", "articles"),
        prepositions=r.set("function", "prepositions"),
        copulas=r.set("function", "copulas"),
        auxiliary_openers=r.set("function", "auxiliary_openers"),
        auxiliaries=r.set("function", "auxiliaries"),
        relatives=r.set("function", "relatives"),
        requests=r.set("function", "requests"),
        who=r.set("questions", "who"),
        where=r.set("questions", "where"),
        when=r.set("questions", "when"),
        wh_determiners=(determiners := r.set("questions", "wh_determiners")),
        wh_pronouns=r.set("questions", "wh_pronouns"),
        question_words=determiners | r.set("questions", "other_question_words"),
        kind_nouns=r.set("kinds", "kind_nouns"),
        category_nouns=r.set("kinds", "category_nouns"),
        class_names=r.set("kinds", "class_names"),
        name_nouns=r.set("kinds", "name_nouns"),
        identity_word=r.text("identity", "word"),
        identity_what=r.set("identity", "what"),
        role_word=r.text("identity", "role_word"),
        origin_word=r.text("origin", "word"),
        origin_where_words=r.set("origin", "where_words"),
        coming=r.set("origin", "coming"),
        containers=(containers := r.set("places", "containers")),
        place_kinds=containers | r.set("places", "settlements"),
        located=r.set("places", "located"),
        place_scale=tuple(tuple(kinds) for kinds in scale),
        place_prototypes=r.words("places", "prototypes"),
        time_words=r.set("times", "words"),
        latest=r.set("times", "latest"),
        earliest=r.set("times", "earliest"),
        families=tuple(frozenset(f) for f in families),
        converse_verbs=r.set("relations", "converse_verbs"),
        inverse_roles=tuple((frozenset(one), frozenset(other)) for one, other in inverse_roles),
        both_ways=r.set("relations", "both_ways"),
        sharing=r.set("relations", "sharing"),
        kin=r.set("kinship", "kin"),
        sexes=r.mapping("kinship", "sexes"),
        spelled_out=r.mapping("kinship", "spelled_out"),
        in_law_spelled=r.mapping("kinship", "in_law_spelled"),
        sexed_steps=r.mapping("kinship", "sexed_steps"),
        lineage=r.mapping("kinship", "lineage"),
        kin_phrases=r.mapping("kinship", "kin_phrases"),
        sex_relations=r.set("kinship", "sex_relations"),
        sex_names=r.mapping("kinship", "sex_names"),
        name_abbreviations=r.mapping("names", "abbreviations"),
        generational=r.set("names", "generational"),
        relation_abbreviations=r.mapping("relation_abbreviations"),
        idioms=_idioms(r.raw("idioms"), path),
        wrappers=r.words("synthesis", "wrappers"),
        forward_step=r.words("synthesis", "forward_step"),
        backward_step=r.words("synthesis", "backward_step"),
        non_entity_answers=(non_entity := r.set("answers", "non_entity")),
        filler_words=non_entity | r.set("answers", "filler"),
        filler_ids=r.set("answers", "no_ids"),
    )
    r.left_over()
    return words


@cache
def english() -> Words:
    """The packaged English word lists, with every profile."""
    return load()


WORDS = english()

__all__ = ["ENGLISH", "PROFILES", "WORDS", "Words", "english", "load"]
