// A page of nodes that still need an embedding (after a change of embedder).
// params: $batch
MATCH (n:Node) WHERE n.embedding IS NULL
RETURN elementId(n) AS id, n.text AS text LIMIT $batch
