// `--sync`, after the edges: deletes the relation texts of one graph that no edge carries any more.
// params: $graph
MATCH (t:Relation {graph: $graph})
WHERE NOT EXISTS { MATCH ()-[r:REL {graph: $graph, text: t.text}]->() }
DELETE t
RETURN count(t) AS deleted
