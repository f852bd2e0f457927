"""`gqa ask`'s human output says how sure an answer is: "(unsure, 0.42)" and a hint naming the `gqa feedback`
command for an unsure answer, "(sure, 0.91)" for a sure one, the confidence alone in between, nothing new where none
was estimated; each node's walk score ("p=…") only where no confidence was estimated, as on the page. No Neo4j:
the answer is printed as the service or `QA.ask` gives it (`show_asked`)."""

from __future__ import annotations

import pytest

from gretriever_neo4j.cli import ask as ask_cli


def asked(confidence, unsure, *, sure=False, nodes=True) -> dict:
    answer = {"mode": "grounded" if nodes else "free-text", "text": "Harbour Street", "models": {"reader": "r"},
              "citations": None, "seconds": 0.1, "confidence": confidence, "unsure": unsure, "sure": sure,
              "nodes": [{"id": 2, "key": "Harbour Street", "text": "Harbour Street", "probability": 0.4,
                         "evidence_paths": []}] if nodes else []}
    return {"id": "r-0123456789ab", "graph": "g", "nodes": [], "edges": [], "tokens": 10, "timings_ms": {},
            "warnings": [], "browser_url": "http://127.0.0.1:7474/browser/", "answer": answer}


@pytest.fixture()
def printed(capsys, monkeypatch):
    monkeypatch.setattr(ask_cli.console, "width", 200)

    def show(data: dict) -> str:
        ask_cli.show_asked(data, as_json=False)
        return capsys.readouterr().out

    return show


def test_an_unsure_answer_is_marked_with_its_confidence_and_how_to_correct_it(printed):
    out = printed(asked(0.42, True))
    assert "1 answer (grounded) (unsure, 0.42)" in out
    assert "tell it the right answer: gqa feedback r-0123456789ab --answer NAME" in out


def test_a_free_text_answer_is_marked_too(printed):
    out = printed(asked(0.3, True, nodes=False))
    assert "Harbour Street (unsure, 0.30)" in out and "gqa feedback r-0123456789ab --answer NAME" in out


def test_a_sure_answer_is_marked_sure_with_its_confidence_and_no_hint(printed):
    out = printed(asked(0.91, False, sure=True))
    assert "1 answer (grounded) (sure, 0.91)" in out
    assert "unsure" not in out and "gqa feedback" not in out


def test_an_answer_neither_sure_nor_unsure_shows_its_confidence_alone(printed):
    out = printed(asked(0.72, False))
    assert "1 answer (grounded) (confidence 0.72)" in out
    assert "sure" not in out.replace("(grounded)", "") and "gqa feedback" not in out


def test_without_a_confidence_nothing_new_is_said(printed):
    out = printed(asked(None, False))
    assert "1 answer (grounded)\n" in out
    assert "confidence" not in out and "unsure" not in out and "gqa feedback" not in out
    legacy = asked(None, False)
    del legacy["answer"]["confidence"], legacy["answer"]["unsure"], legacy["answer"]["sure"]  # an earlier server
    assert printed(legacy) == out


def test_unsure_without_a_confidence_is_still_marked(printed):
    out = printed(asked(None, True))
    assert "(unsure)" in out and "gqa feedback r-0123456789ab --answer NAME" in out


def test_a_nodes_walk_score_is_shown_only_where_no_confidence_says_how_sure(printed):
    # the walk score is 1.00 for every end node of the best walk, right or wrong: beside a calibrated confidence
    # it would contradict it
    assert "p=0.40" not in printed(asked(0.72, False))
    assert "p=0.40" in printed(asked(None, False))
