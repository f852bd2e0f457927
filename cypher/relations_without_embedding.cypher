// A page of relation texts that still need an embedding (after a change of embedder).
// params: $batch
MATCH (t:Relation) WHERE t.embedding IS NULL
RETURN elementId(t) AS id, t.text AS text LIMIT $batch
