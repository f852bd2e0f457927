// Edges of one graph with text and vector: those with the given element ids, or (null $refs) all of them.
// params: $graph, $refs
MATCH (a:Node {graph: $graph})-[r:REL]->(b:Node)
WHERE $refs IS NULL OR elementId(r) IN $refs
RETURN a.key AS src, r.text AS text, b.key AS dst, r.embedding AS embedding, elementId(r) AS ref
ORDER BY src, text, dst
