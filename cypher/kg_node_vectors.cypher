// Text, vector and degree of the given nodes of one graph (unknown keys give no row).
// params: $graph, $keys
UNWIND $keys AS key
MATCH (n:Node {graph: $graph, key: key})
RETURN n.key AS key, n.text AS text, n.embedding AS embedding, COUNT { (n)-[:REL]-() } AS degree
