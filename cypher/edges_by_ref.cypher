// Edges by element id (one seek each), with text, in the order given (vectors come once per text).
// params: $refs
UNWIND $refs AS ref
MATCH (a:Node)-[r:REL]->(b:Node) WHERE elementId(r) = ref
RETURN a.key AS src, r.text AS text, b.key AS dst, elementId(r) AS ref
