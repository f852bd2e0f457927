// Deletes up to $batch nodes of one graph (one transaction; their relationships were deleted before, DETACH only
// guards against a stray one); the caller repeats until none is left.
// params: $graph, $batch
MATCH (n:Node {graph: $graph})
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(n) AS deleted
