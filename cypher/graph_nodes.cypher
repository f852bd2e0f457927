// Nodes of one graph with text and vector, by key (null $keys: the whole graph).
// params: $graph, $keys
MATCH (n:Node {graph: $graph})
WHERE $keys IS NULL OR n.key IN $keys
RETURN n.key AS key, n.text AS text, n.embedding AS embedding, elementId(n) AS ref
ORDER BY key
