// The distinct relation texts of one graph (relation-path retrieval embeds them once, humanized).
// params: $graph
MATCH ()-[r:REL {graph: $graph}]->()
RETURN DISTINCT r.text AS text
