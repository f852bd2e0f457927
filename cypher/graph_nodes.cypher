// Every node of one graph with text, vector and element id (by key: nodes_by_key).
// params: $graph
MATCH (n:Node {graph: $graph})
RETURN n.key AS key, n.text AS text, n.embedding AS embedding, elementId(n) AS ref
