"""Constrained decoding: whatever a (random, tiny) LLM prefers, it can only say the allowed items."""

import pytest

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.model.constrained import TrieConstraint, item_token_ids, separator_ids
from gretriever_neo4j.model.sample import collate

from model_toys import random_sample, toy_model

NAMES = ["Paris", "Par", "Lyon", "Saint-Étienne", "Lightning rod", "Lightning"]


def constraint_for(model, names=NAMES, **options):
    return TrieConstraint(item_token_ids(model.tokenizer, names), separator_ids(model.tokenizer),
                          model.stop_token_ids(), **options)


@pytest.mark.parametrize("seed", range(6))
def test_a_random_llm_can_only_emit_node_names(seed):
    model = toy_model("inference-only", seed=seed).eval()
    samples = [random_sample(seed * 10 + i, 3, question=f"q{seed} {i}?") for i in range(4)]
    constraints = [constraint_for(model) for _ in samples]
    # 80 byte tokens hold all six names with their separators: no output is cut inside a name
    for _sample, ids, constraint in zip(samples, model.generate_ids(collate(samples), max_new_tokens=80,
                                                                   constraints=constraints), constraints):
        said = constraint.decode_items(ids)
        text = model.tokenizer.decode(ids, skip_special_tokens=True)
        items = text.split("|")
        assert items and all(item in NAMES for item in items), text  # nothing but node names
        assert len(set(items)) == len(items)  # each at most once
        assert [NAMES[i] for i in said] == items[:len(said)]


def test_unconstrained_rows_in_the_same_batch_stay_free():
    model = toy_model("inference-only", seed=1, max_new_tokens=12).eval()
    samples = [random_sample(1, 3), random_sample(2, 3)]
    free_only = model.generate(collate(samples), max_new_tokens=12)
    mixed = model.generate(collate(samples), max_new_tokens=12, constraints=[constraint_for(model), None])
    assert mixed[0].split("|")[0] in NAMES
    assert mixed[1] == free_only[1]


def test_reader_potentials_steer_the_choice_and_the_stop():
    model = toy_model("inference-only", seed=3, max_new_tokens=40).eval()
    sample = random_sample(5, 3)
    names = ["Lyon", "Paris", "Nice"]
    strong = constraint_for(model, names, potentials=[-9.0, 9.0, 9.0], weight=10.0, stop_potential=0.0)
    ids = model.generate_ids(collate([sample]), max_new_tokens=40, constraints=[strong])[0]
    said = [names[i] for i in strong.decode_items(ids)]
    assert sorted(said) == ["Nice", "Paris"]  # the sure ones, then stop before the unlikely one


def test_grammar_replay():
    c = TrieConstraint([[1, 2], [1], [3]], separator=[9], eos=[0], max_items=2)
    assert set(c.allowed([])) == {1, 3}
    assert set(c.allowed([1])) == {2, 9, 0}  # continue to [1, 2], or end item [1]
    assert set(c.allowed([1, 2])) == {9, 0}
    assert set(c.allowed([1, 2, 9])) == {1, 3}  # [1] is still open, its prefix too
    assert set(c.allowed([1, 2, 9, 3])) == {0}  # max_items reached: only EOS
    assert c.decode_items([1, 2, 9, 3, 0]) == [0, 2]
    assert c.decode_items([1, 2, 9, 1]) == [0, 1]  # cut off exactly at an item's end
    with pytest.raises(InputError):
        c.state([5])
    sure = TrieConstraint([[1], [3], [4]], separator=[9], eos=[0], potentials=[5.0, 5.0, -5.0], stop_potential=0.0,
                          must_say_above_stop=True)
    assert set(sure.allowed([1])) == {9}  # item [3] is above the stop potential: it must be said
    assert set(sure.allowed([1, 9, 3])) == {9, 0}  # only a doubtful one is left: free to stop
    with pytest.raises(InputError):
        TrieConstraint([], separator=[9], eos=[0])
