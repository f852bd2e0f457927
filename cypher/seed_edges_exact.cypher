// params: $k, $vector, $graph
MATCH (a:Node {graph: $graph})-[r:REL]->(b:Node)
WITH a, r, b, vector.similarity.cosine(r.embedding, $vector) AS score
ORDER BY score DESC, a.key ASC, r.text ASC, b.key ASC
LIMIT $k
RETURN a.key AS src, r.text AS text, b.key AS dst, r.graph AS graph, score, elementId(r) AS ref
