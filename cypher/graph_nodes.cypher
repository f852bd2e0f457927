// Nodes of one graph with text and vector: the whole graph, or (non-null $keys) those keys in that order.
// params: $graph, $keys
CALL (*) {
  WITH * WHERE $keys IS NULL
  MATCH (n:Node {graph: $graph})
  RETURN n
UNION
  WITH * WHERE $keys IS NOT NULL
  UNWIND $keys AS key
  MATCH (n:Node {graph: $graph, key: key})
  RETURN n
}
RETURN n.key AS key, n.text AS text, n.embedding AS embedding, elementId(n) AS ref
