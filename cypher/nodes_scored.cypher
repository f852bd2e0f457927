// Text and similarity to the question of the given nodes of one graph (seeds that no expansion reached).
// params: $graph, $keys, $vector
UNWIND $keys AS key
MATCH (n:Node {graph: $graph, key: key})
RETURN n.key AS key, n.text AS text, elementId(n) AS ref, vector.similarity.cosine(n.embedding, $vector) AS score
