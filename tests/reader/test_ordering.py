"""Which answer comes first (reader/ordering.py): the order in time a question asks for, read from the names."""

from __future__ import annotations

import numpy as np

from gretriever_neo4j.reader import ZeroShotReader
from gretriever_neo4j.reader.ordering import time_order, years
from gretriever_neo4j.reader.paths import SubgraphView
from gretriever_neo4j.retrieval.linking import analyzer_tokens

from fakes import FakeEmbedder

FINALS = ["Boston Bruins", "1941 Stanley Cup Finals", "2013 Stanley Cup Finals", "1929 Stanley Cup Finals",
          "2011 Stanley Cup Finals"]


def order(question: str, texts=FINALS, candidates=(1, 2, 3, 4)) -> list[str] | None:
    key = time_order(analyzer_tokens(question), texts, list(candidates))
    return None if key is None else [texts[i] for i in sorted(candidates, key=lambda c: -key[c])]


def test_years_are_read_from_names_only_where_written_in_digits():
    assert years("2000–01 FA Cup") == [2000]
    assert years("Super Bowl XLVII") == []
    assert years("Route 12345") == []


def test_last_puts_the_latest_year_first_and_first_the_earliest():
    assert order("when was the last time the bruins went to the stanley cup")[0] == "2013 Stanley Cup Finals"
    assert order("when did the bruins first go to the stanley cup")[0] == "1929 Stanley Cup Finals"
    assert order("what year did the bruins go to the stanley cup") is None  # no order asked


def test_a_year_the_question_names_comes_first():
    assert order("who played in the stanley cup in 2011")[0] == "2011 Stanley Cup Finals"
    assert order("who played in the stanley cup in 1999") is None  # no name says 1999: no order


def test_no_order_where_an_answer_names_no_year():
    texts = FINALS + ["Super Bowl XLIII"]
    assert order("when was the last time the bruins won", texts, (5, 1, 3)) is None


def test_fewer_than_two_names_with_years_ask_no_order():
    assert order("when was the last time", ["A", "2001 B", "C"], (1, 2)) is None


def test_the_zero_shot_reader_answers_the_latest_final_first():
    embed = FakeEmbedder().embed
    texts = FINALS
    sub = SubgraphView(node_keys=list(texts), node_texts=list(texts), node_vectors=embed(texts),
                       src=np.asarray([0, 0, 0, 0]), dst=np.asarray([1, 2, 3, 4]), relation=np.zeros(4, np.int64),
                       relation_texts=["sports.team.championships"],
                       relation_vectors=embed(["sports.team.championships"]))
    reader = ZeroShotReader(embed)
    for question, first in (("when was the last time X went to the championships", "2013 Stanley Cup Finals"),
                            ("when was the first time X went to the championships", "1929 Stanley Cup Finals")):
        reading = reader.read(question, sub, [0], embed([question])[0], embed([question])[0])
        assert sub.node_texts[reading.answers[0]] == first
        assert len(reading.answers) == 4


def test_the_noun_a_what_question_opens_with_puts_its_kind_first():
    embed = FakeEmbedder().embed
    # the whole question is nearer the school named after him; the noun "college", nearer the college
    texts = ["Albert Einstein", "Albert Einstein Gymnasium", "Zurich Polytechnic College"]
    sub = SubgraphView(node_keys=list(texts), node_texts=list(texts), node_vectors=embed(texts),
                       src=np.asarray([0, 0]), dst=np.asarray([1, 2]), relation=np.zeros(2, np.int64),
                       relation_texts=["education.institution"], relation_vectors=embed(["education.institution"]))
    reader = ZeroShotReader(embed)
    question = "what college did albert einstein go to"
    reading = reader.read(question, sub, [0], embed(["what college did X go to"])[0], embed([question])[0])
    assert [sub.node_texts[a] for a in reading.answers] == ["Zurich Polytechnic College", "Albert Einstein Gymnasium"]
