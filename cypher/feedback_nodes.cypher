// Key and text of the given nodes of one graph, in the order given (unknown keys give no row).
// params: $graph, $keys
UNWIND $keys AS key
MATCH (n:Node {graph: $graph, key: key})
USING INDEX n:Node(graph, key)
RETURN n.key AS key, n.text AS text
