// Element ids of the given node keys of one graph (what a recorded retrieval lists), unknown keys left out.
// params: $graph, $keys
UNWIND $keys AS key
MATCH (n:Node {graph: $graph, key: key})
RETURN n.key AS key, elementId(n) AS ref
