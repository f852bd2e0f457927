// Deletes up to $batch recorded retrievals (`gqa ask`) over one graph.
// params: $graph, $batch
MATCH (x:Retrieval) WHERE x.graph = $graph
WITH x LIMIT $batch
DETACH DELETE x
RETURN count(x) AS deleted
