// `--sync`: deletes the given nodes of one graph (by key), those its source no longer holds, with any edge left
// on them.
// params: $graph, $keys
UNWIND $keys AS key
MATCH (n:Node {graph: $graph, key: key})
DETACH DELETE n
RETURN count(n) AS deleted
