// Exact top nodes of one graph by cosine (small graphs, and the fallback when the index finds too few).
// params: $k, $vector, $graph
MATCH (n:Node {graph: $graph})
WITH n, vector.similarity.cosine(n.embedding, $vector) AS score
ORDER BY score DESC, n.key ASC
LIMIT $k
RETURN n.key AS key, n.graph AS graph, score, elementId(n) AS ref, n.text AS text, COUNT { (n)-[:REL]-() } AS degree
