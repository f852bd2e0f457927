// Deletes up to $batch relation texts of one graph (one transaction), after its edges; the caller repeats until
// none is left. Their vectors leave the relation vector index with them.
// params: $graph, $batch
MATCH (t:Relation {graph: $graph})
WITH t LIMIT $batch
DELETE t
RETURN count(t) AS deleted
