"""The word lists as data (gretriever_neo4j/language): each list once, loaded typed, the Freebase profile kept
apart, and a mistake in the data named by file and key rather than silently emptying a list."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.language import ENGLISH, PROFILES, WORDS, Words, load
from gretriever_neo4j.reader.wording import plain_words, stem_match

tomllib = pytest.importorskip("tomllib")  # Python 3.11 and later
PACKAGE = Path(__file__).resolve().parents[2] / "gretriever_neo4j"


def _lists(data: dict):
    """Every list of words of the data, a section's key at a time (a list written as one string of words too)."""
    for section, table in data.items():
        for key, value in table.items() if isinstance(table, dict) else ():
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                yield f"{section}.{key}", frozenset(value)
            elif isinstance(value, list):  # families, inverse roles, the place scale: lists of lists
                for i, inner in enumerate(value):
                    for j, words in enumerate(inner if inner and isinstance(inner[0], list) else [inner]):
                        yield f"{section}.{key}[{i}][{j}]", frozenset(words)
            elif isinstance(value, str) and len(value.split()) > 5:
                yield f"{section}.{key}", frozenset(value.split())


def test_no_word_list_is_defined_twice():
    lists = dict(_lists(tomllib.loads(ENGLISH.read_text(encoding="utf-8"))))
    assert len(lists) > 30
    seen: dict[frozenset[str], str] = {}
    for name, words in lists.items():
        assert words not in seen, f"{name} repeats {seen.get(words)}"
        seen[words] = name


def test_no_english_word_set_is_written_in_the_reader_or_the_retrieval():
    """Every set of three or more English words the reader and the retrieval test a word against comes from the data
    (a tuple of names, such as a stage list, is no word list)."""
    word = re.compile(r"^[a-z']+$")
    found = []
    for folder in ("reader", "retrieval"):
        for path in (PACKAGE / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                strings = []
                if isinstance(node, ast.Set):
                    strings = node.elts
                elif isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("frozenset", "set"):
                    strings = [e for a in node.args for e in getattr(a, "elts", [])]
                    strings += [a.func.value for a in node.args if isinstance(a, ast.Call)
                                and isinstance(a.func, ast.Attribute) and isinstance(a.func.value, ast.Constant)]
                texts = [s.value for s in strings if isinstance(s, ast.Constant) and isinstance(s.value, str)]
                words = [w for text in texts for w in text.split()]  # `frozenset("a b c".split())` too
                if len(texts) == len(strings) and len(words) >= 3 and all(word.match(w) for w in words):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not found


def test_the_lists_load_typed():
    assert isinstance(WORDS, Words)
    assert {"the", "about"} <= WORDS.stop and WORDS.naming_function_words == {"about"}
    assert WORDS.question_words >= WORDS.wh_determiners | {"who", "how"}
    assert WORDS.place_kinds >= WORDS.containers | {"city"}
    assert WORDS.place_scale[0] == ("city", "town", "village")  # order decides: smallest first
    assert WORDS.families[0] >= {"tag", "describe"}  # order decides: a word's family is the first that holds it
    assert WORDS.sexes["wife"] == "spouse"
    with pytest.raises(TypeError):
        WORDS.sexes["wife"] = "parent"  # type: ignore[index]
    assert plain_words("where was X laid to rest") == "where was X buried"
    assert plain_words("WHAT CAN X DO") == "what is X capable of"  # an idiom that ignores case


def test_freebase_words_come_from_their_profile(tmp_path):
    without = load(profiles=None)
    assert "containedby" in WORDS.located and "containedby" not in without.located
    locate = next(f for f in WORDS.families if "locate" in f)
    assert "containedby" in locate and not any("containedby" in f for f in without.families)
    assert stem_match("located", "containedby")  # what the profile is for: "where is X located" / `containedby`
    assert without.located | {"containedby"} == WORDS.located


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "words.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_key_nobody_reads_is_named(tmp_path):
    text = ENGLISH.read_text(encoding="utf-8").replace("[kinds]\n", "[kinds]\nkind_nuons = [\"kind\"]\n", 1)
    with pytest.raises(ConfigError, match=r"words\.toml: \[kinds\] 'kind_nuons': not a word list gqa reads"):
        load(_write(tmp_path, text), profiles=None)


def test_a_missing_list_is_named(tmp_path):
    text = re.sub(r"(?m)^copulas = .*\n", "", ENGLISH.read_text(encoding="utf-8"))
    with pytest.raises(ConfigError, match=r"words\.toml: \[function\] has no 'copulas'"):
        load(_write(tmp_path, text), profiles=None)


def test_an_empty_list_or_a_bad_idiom_is_named(tmp_path):
    text = re.sub(r"(?m)^copulas = .*\n", "copulas = []\n", ENGLISH.read_text(encoding="utf-8"))
    with pytest.raises(ConfigError, match=r"'copulas' must be a list of words"):
        load(_write(tmp_path, text), profiles=None)
    text = ENGLISH.read_text(encoding="utf-8").replace('["parent", "father"], ["parent", "mother"]',
                                                       '"parent father", ["parent", "mother"]')
    with pytest.raises(ConfigError, match=r"\[relations\] 'families' must be a list of lists of words"):
        load(_write(tmp_path, text), profiles=None)
    text = ENGLISH.read_text(encoding="utf-8").replace(', ["subordinate"]]', "]")  # a role without its pair
    with pytest.raises(ConfigError, match=r"'inverse_roles' must be a list of pairs of lists of words"):
        load(_write(tmp_path, text), profiles=None)
    text = ENGLISH.read_text(encoding="utf-8").replace("pattern = '^what goes into (.+)$'", "pattern = '^what (goes'")
    with pytest.raises(ConfigError, match=r"words\.toml: idiom 5: missing \)"):
        load(_write(tmp_path, text), profiles=None)


def test_a_profile_word_for_no_list_is_named(tmp_path):
    profiles = tmp_path / "profiles.toml"
    profiles.write_text(PROFILES.read_text(encoding="utf-8") + "\n[wikidata.families]\nlocatd = [\"p131\"]\n",
                        encoding="utf-8")
    with pytest.raises(ConfigError, match=r"profiles\.toml: \[wikidata\.families\] 'locatd': no family holds"):
        load(profiles=profiles)
    profiles.write_text("[wikidata.families]\nlocate = \"p131\"\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[wikidata\.families\] 'locate' must be a list of words"):
        load(profiles=profiles)
    for section, key in (("places", "location"), ("relations", "families"), ("identity", "word")):
        profiles.write_text(f"[wikidata.{section}]\n{key} = [\"p131\"]\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=rf"\[wikidata\.{section}\] '{key}': no such word list"):
            load(profiles=profiles)


def test_unreadable_toml_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"words\.toml"):
        load(_write(tmp_path, "[function\nstop = 1"), profiles=None)
