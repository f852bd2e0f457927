// Nodes of one graph with text, vector and element id, by key in the order given (unknown keys give no row).
// params: $graph, $keys
UNWIND $keys AS key
MATCH (n:Node {graph: $graph, key: key})
RETURN n.key AS key, n.text AS text, n.embedding AS embedding, elementId(n) AS ref
