// Deletes up to $batch relationships of one graph (one transaction); the caller repeats until none is left.
// Their vectors leave the relationship vector index with them.
// params: $graph, $batch
MATCH ()-[r:REL {graph: $graph}]->()
WITH r LIMIT $batch
DELETE r
RETURN count(r) AS deleted
