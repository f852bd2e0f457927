"""Textualisation: the exact CSV text G-Retriever feeds the LLM, and token counting."""

from __future__ import annotations

import numpy as np
import pytest

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.retrieval.candidates import CandidateGraph
from gretriever_neo4j.retrieval.textualize import count_tokens, graph_csv, textualize


@pytest.fixture
def graph() -> CandidateGraph:
    one = [1.0, 0.0]
    return CandidateGraph.from_records(
        [("k0", "plain", one), ("k1", "Paris, France", one), ("k2", 'the "City of Light"', one),
         ("k3", "unused", one)],
        [("k1", "capital of", "k0", one), ("k2", 'said "hi", twice', "k1", one), ("k3", "x", "k0", one)],
        node_refs=["4:db:0", "4:db:1", "4:db:2", "4:db:3"], edge_refs=["5:db:0", "5:db:1", "5:db:2"])


def test_exact_text_with_local_ids_in_node_order_and_minimal_quoting(graph):
    result = textualize(graph, [1, 2, 0], [1, 0])
    assert result.text == (
        'node_id,node_attr\n'
        '0,"Paris, France"\n'
        '1,"the ""City of Light"""\n'
        '2,plain\n'
        '\n'
        'src,edge_attr,dst\n'
        '1,"said ""hi"", twice",0\n'
        '0,capital of,2\n'
    )
    assert result.node_keys == ["k1", "k2", "k0"]
    assert result.node_refs == ["4:db:1", "4:db:2", "4:db:0"]
    assert [(e.src, e.text, e.dst, e.ref) for e in result.edges] == [
        (1, 'said "hi", twice', 0, "5:db:1"), (0, "capital of", 2, "5:db:0")]
    assert result.node_indices == [1, 2, 0] and result.edge_indices == [1, 0]


def test_line_breaks_are_quoted():
    assert graph_csv(["two\nlines", ""], [(0, "r", 1)]) == (
        'node_id,node_attr\n0,"two\nlines"\n1,\n\nsrc,edge_attr,dst\n0,r,1\n')


def test_empty_selection_and_empty_graph():
    expected = "node_id,node_attr\n\nsrc,edge_attr,dst\n"
    empty = textualize(CandidateGraph.empty(dim=2), [], [])
    assert empty.text == expected and empty.node_keys == [] and empty.edges == []
    assert empty.node_refs is None
    assert empty.to_dict() == {"text": expected, "node_keys": [], "node_refs": None, "edges": [],
                               "node_indices": [], "edge_indices": []}


def test_edges_must_stay_inside_the_chosen_nodes(graph):
    with pytest.raises(InputError) as error:
        textualize(graph, [1], [0])
    assert error.value.field == "edge_idx"
    with pytest.raises(InputError) as error:
        textualize(graph, [0, 0], [])
    assert error.value.field == "node_idx"
    with pytest.raises(InputError) as error:
        textualize(graph, [9], [])
    assert error.value.field == "node_idx"


def test_accepts_numpy_indices(graph):
    assert textualize(graph, np.array([0, 1]), np.array([0])).text.endswith("src,edge_attr,dst\n1,capital of,0\n")


def test_count_tokens_estimate_counts_words_and_punctuation():
    assert count_tokens("node_id,node_attr\n0,plain") == 6
    assert count_tokens('say "hi", Bob!') == 7
    assert count_tokens("") == 0


def test_count_tokens_with_a_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    word_level = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1, "b": 2, ",": 3}, unk_token="[UNK]"))
    word_level.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=word_level, unk_token="[UNK]", bos_token="[UNK]")
    assert count_tokens("a, b zz b", tokenizer) == 5
