"""`gqa train --graph G` on a graph with a few questions of its own (real Neo4j, the CLI as a user runs it): the
zero-shot reader adapts to them (`reader.lexicon`), cross-validated; a later run on the unchanged graph only adapts
the reader again (warm), and a plain `gqa ask` reads with what it learned."""

from __future__ import annotations

import json

import pytest
from restaurant_kg import RESTAURANTS

from cli_helpers import gqa

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]



def _ask(graph: str, question: str) -> dict:
    asked = gqa("ask", "--graph", graph, "--reader-only", "--json", question)
    assert asked.returncode == 0, asked.stderr[-3000:]
    return json.loads(asked.stdout)["answer"]


def test_a_few_own_questions_teach_the_graphs_words(store, cli_env):
    graph = store.test_prefix
    triples = cli_env / "kb.tsv"
    triples.write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in RESTAURANTS))
    assert gqa("ingest", "triples", "--source", str(triples), "--graph", graph).returncode == 0
    owner = "what's Blue Door's kribble?"  # the house's own word for its owner: no encoder knows it
    assert _ask(graph, owner)["text"] != "Cora Vale"

    own = cli_env / "own.tsv"
    own.write_text("what's Red Lantern's kribble?\tIvo Marsh\t\ttrain\n"
                   "who cooks at Red Lantern?\tTom Reed\t\ttrain\n")
    assert gqa("ingest", "questions", "--graph", graph, "--source", str(own)).returncode == 0
    trained = gqa("train", "--graph", graph, "--synthetic-paths", "100")
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert "adapted to its 2 own questions" in trained.stdout, trained.stdout[-2000:]
    folder = cli_env / "home" / "models" / graph
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["lexicon"] == "lexicon.json" and manifest["reader"] is None
    fewshot = manifest["details"]["fewshot"]
    assert fewshot["questions"] == 2 and fewshot["adopted"] and fewshot["after"] >= fewshot["before"]
    lexicon = json.loads((folder / "lexicon.json").read_text())
    assert {"gram": "kribble", "relation": "owned by"} in [{k: e[k] for k in ("gram", "relation")}
                                                         for e in lexicon["entries"]]
    answer = _ask(graph, owner)
    assert answer["text"] == "Cora Vale"
    assert "adapted to 2 questions" in answer["models"]["reader"]

    # one more question, the graph unchanged: only the reader adapts again (no retriever training)
    with own.open("a") as more:  # a questions file's rows are keyed by their line: the file grows
        more.write("kribble of Blue Door\tCora Vale\t\ttrain\n")
    assert gqa("ingest", "questions", "--graph", graph, "--source", str(own)).returncode == 0
    again = gqa("train", "--graph", graph)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "graph unchanged since the last `gqa train`" in again.stdout
    assert "learned retriever:" not in again.stdout and "self-supervised questions" not in again.stdout
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["details"]["fewshot"]["questions"] == 3 and manifest["lexicon"] == "lexicon.json"
