// Edges by element id (one seek each), with text and vector, in the order given.
// params: $refs
UNWIND $refs AS ref
MATCH (a:Node)-[r:REL]->(b:Node) WHERE elementId(r) = ref
RETURN a.key AS src, r.text AS text, b.key AS dst, r.embedding AS embedding, elementId(r) AS ref
