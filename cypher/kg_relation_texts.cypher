// The distinct relation texts of one graph (relation-path retrieval embeds them once, humanized).
// params: $graph
MATCH (t:Relation {graph: $graph})
WHERE EXISTS { MATCH ()-[:REL {graph: $graph, text: t.text}]->() }
RETURN t.text AS text
