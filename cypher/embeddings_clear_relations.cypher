// Removes relation embeddings in batches so that a re-embed can start over; returns how many were cleared.
// params: $batch
MATCH (t:Relation) WHERE t.embedding IS NOT NULL
WITH t LIMIT $batch
REMOVE t.embedding
RETURN count(t) AS cleared
