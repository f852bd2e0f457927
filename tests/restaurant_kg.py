"""A small restaurant graph as (head, relation, tail) triples, whose menus are `served at` relations: a word people
use for them ("menu") is nothing like the relation's name, so the hand-set reader needs the graph's own questions
to read it (`reader.lexicon`); the walk encoder learned "menu" from other graphs, but not a house's own made-up
word ("kribble", used by the tests for the owner: a relation the general reader does not guess for an unknown
word, as it has come to guess the menu)."""

RESTAURANTS = [
    ("Mushroom Risotto", "served at", "Blue Door"), ("Lemon Tart", "served at", "Blue Door"),
    ("Anna Pike", "chef of", "Blue Door"), ("Blue Door", "located in", "Harbor Street"),
    ("Fish Stew", "served at", "Red Lantern"), ("Tom Reed", "chef of", "Red Lantern"),
    ("Red Lantern", "located in", "Mill Lane"), ("Blue Door", "owned by", "Cora Vale"),
    ("Red Lantern", "owned by", "Ivo Marsh"), ("Anna Pike", "trained at", "Red Lantern"),
    ("Harbor Street", "part of", "Old Town"), ("Pear Cake", "served at", "Green Gate"),
    ("Green Gate", "located in", "Mill Lane"), ("Lu Chen", "chef of", "Green Gate"),
]
