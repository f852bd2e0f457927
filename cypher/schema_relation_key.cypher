// One (:Relation) per (graph, text): the one stored vector that every edge with that text in that graph shares.
// params:
CREATE CONSTRAINT relation_graph_text IF NOT EXISTS FOR (t:Relation) REQUIRE (t.graph, t.text) IS UNIQUE
