import numpy as np
import pytest

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.reader.paths import (
    SubgraphView,
    evidence_edges,
    find_anchors,
    named_nodes,
    prefer_verbatim,
    signature_text,
    walks,
)
from gretriever_neo4j.retrieval.linking import mask_question, same_word


def view_of(triples, texts=None):
    """A view over triples with one-hot-ish vectors (node i -> e_i)."""
    keys = list(dict.fromkeys(k for h, _, t in triples for k in (h, t)))
    relations = list(dict.fromkeys(r for _, r, _ in triples))
    index = {k: i for i, k in enumerate(keys)}
    dim = len(keys) + len(relations)
    nodes = np.eye(dim, dtype=np.float32)[:len(keys)]
    rel = np.eye(dim, dtype=np.float32)[len(keys):]
    return SubgraphView(node_keys=keys, node_texts=[(texts or {}).get(k, k) for k in keys], node_vectors=nodes,
                        src=np.asarray([index[h] for h, _, _ in triples]),
                        dst=np.asarray([index[t] for _, _, t in triples]),
                        relation=np.asarray([relations.index(r) for _, r, _ in triples]), relation_texts=relations,
                        relation_vectors=rel)


FILMS = [("Heat", "directed_by", "Michael Mann"), ("Heat", "starred_actors", "Al Pacino"),
         ("Heat", "starred_actors", "Robert De Niro"), ("Casino", "starred_actors", "Robert De Niro"),
         ("Casino", "directed_by", "Martin Scorsese"), ("Heat", "release_year", "1995")]


def test_walk_signatures_reach_every_node_with_its_relation_path():
    view = view_of(FILMS)
    found = walks(view, [view.node_keys.index("Al Pacino")], max_hops=3)
    reached = {(view.node_keys[n], signature_text(view, found.signatures[s]))
               for n, s in zip(found.pair_node.tolist(), found.pair_sig.tolist())}
    assert ("Heat", "<starred_actors") in reached
    assert ("Michael Mann", "<starred_actors directed_by>") in reached
    assert ("Casino", "<starred_actors starred_actors> <starred_actors") in reached
    assert all(len(found.signatures[s]) <= 3 for s in found.pair_sig.tolist())
    # pairs are distinct per level: a node reached twice by the same signature at one level is listed once
    levels = [set(zip(found.pair_node[a:b].tolist(), found.pair_sig[a:b].tolist()))
              for a, b in zip(found.level_start[:-1], found.level_start[1:])]
    assert sum(len(level) for level in levels) == found.num_pairs


def test_evidence_edges_walk_back_to_the_anchor():
    view = view_of(FILMS)
    found = walks(view, [view.node_keys.index("Al Pacino")], max_hops=2)
    pair = next(i for i, (n, s) in enumerate(zip(found.pair_node, found.pair_sig))
                if view.node_keys[n] == "Michael Mann" and len(found.signatures[s]) == 2)
    edges = evidence_edges(found, [pair])
    assert [FILMS[e] for e in edges] == [("Heat", "starred_actors", "Al Pacino"),
                                         ("Heat", "directed_by", "Michael Mann")]


def test_walks_of_an_empty_graph_and_bad_anchors():
    empty = view_of([])
    assert walks(empty, [], 2).num_pairs == 0
    with pytest.raises(InputError):
        walks(view_of(FILMS), [99], 2)


def test_anchors_named_partially_named_and_hinted():
    view = view_of(FILMS + [("Franklin stove", "invented_by", "Benjamin Franklin")])
    assert [view.node_texts[i] for i in named_nodes("who directed heat?", view.node_texts)] == ["Heat"]
    # "ben franklin" names Benjamin Franklin only in part; the stove shares the word too, the person is nearer
    query = view.node_vectors[view.node_keys.index("Benjamin Franklin")]
    assert [view.node_texts[i] for i in find_anchors("what did ben franklin invent", view, query)] == \
        ["Benjamin Franklin"]
    assert find_anchors("who directed heat", view, None, hints=["Casino"]) == [view.node_keys.index("Casino")]
    assert same_word("jamaica", "jamaican") and not same_word("ben", "benjamin")


def test_hinted_anchors_also_named_take_the_other_names_but_the_kind_asked_for():
    view = view_of(FILMS + [("Casino", "genre", "Crime"), ("Crime", "parent_genre", "Drama")])
    # the linker seeded Casino; the question also names Al Pacino, who is an anchor too
    assert [view.node_texts[i] for i in find_anchors("did al pacino act in casino", view, None, hints=["Casino"],
                                                     also_named=True)] == ["Casino", "Al Pacino"]
    assert [view.node_texts[i] for i in find_anchors("did al pacino act in casino", view, None,
                                                     hints=["Casino"])] == ["Casino"]
    # "what kind of crime": Crime is the kind of thing asked for, not what the question is about
    assert [view.node_texts[i] for i in find_anchors("what kind of crime film is casino", view, None,
                                                     hints=["Casino"], also_named=True)] == ["Casino"]


def test_named_nodes_prefers_the_longest_span():
    texts = ["Hanks", "Tom Hanks", "Big"]
    assert [texts[i] for i in named_nodes("what films did Tom Hanks star in", texts)] == ["Tom Hanks"]


def test_mask_question_hides_what_is_asked_about():
    assert mask_question("who directed [Heat]", ["Heat"]) == "who directed X"
    assert mask_question("what else did ben franklin invent?", ["Benjamin Franklin"]) == \
        "what else did ben X invent?"
    assert mask_question("who directed heat", []) == "who directed heat"


def test_verbatim_names_win_among_names_that_read_the_same():
    texts = ["Moulin Rouge!", "Moulin Rouge", "Hotel", "hotel"]
    assert prefer_verbatim("who acted in Moulin Rouge!", texts, [0, 1]) == [0]
    assert prefer_verbatim("who acted in moulin rouge", texts, [0, 1]) == [0, 1]  # neither written as named
    assert prefer_verbatim("the film Hotel was directed by who", texts, [2, 3]) == [2]
