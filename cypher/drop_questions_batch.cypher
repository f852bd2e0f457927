// Deletes up to $batch questions asked over one graph, whatever their dataset.
// params: $graph, $batch
MATCH (q:Question) WHERE q.graph = $graph
WITH q LIMIT $batch
DELETE q
RETURN count(q) AS deleted
