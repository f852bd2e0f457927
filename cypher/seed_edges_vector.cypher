// Top relationships by cosine from the relationship vector index, with their endpoints.
// params: $k, $vector, $graph
CALL db.index.vector.queryRelationships('rel_embedding', $k, $vector) YIELD relationship AS r, score
WHERE $graph IS NULL OR r.graph = $graph
RETURN startNode(r).key AS src, r.text AS text, endNode(r).key AS dst, r.graph AS graph, score,
       elementId(r) AS ref
