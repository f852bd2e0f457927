// Removes node embeddings in batches so that a re-embed can start over; returns how many remain.
// params: $batch
MATCH (n:Node) WHERE n.embedding IS NOT NULL
WITH n LIMIT $batch
REMOVE n.embedding
RETURN count(n) AS cleared
