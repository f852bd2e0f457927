// Every edge of one graph with text and vector.
// params: $graph
MATCH (a:Node {graph: $graph})-[r:REL]->(b:Node)
RETURN a.key AS src, r.text AS text, b.key AS dst, r.embedding AS embedding, elementId(r) AS ref
