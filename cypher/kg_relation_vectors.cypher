// One stored vector per relation text of one graph (all edges with a text share its (:Relation)).
// params: $graph, $texts
MATCH (t:Relation {graph: $graph})
WHERE t.text IN $texts
RETURN t.text AS text, t.embedding AS embedding
