// Top relation texts by cosine from the relation vector index (kept only in the requested graph; $graph null:
// any graph), then their edges. Edges of one text tie: within a text they come in (source key, target key)
// order, so that the first $k are the ones `retrieval.seeds` ranks first (the caller ranks across texts).
// $k is oversampled by the caller because the index ranks across every stored graph.
// params: $k, $vector, $graph
CALL db.index.vector.queryNodes('relation_embedding', $k, $vector) YIELD node AS t, score
WHERE $graph IS NULL OR t.graph = $graph
CALL (t) {
  MATCH (a:Node)-[r:REL {graph: t.graph, text: t.text}]->(b:Node)
  WITH a, r, b ORDER BY a.key ASC, b.key ASC LIMIT $k
  RETURN a, r, b
}
RETURN a.key AS src, r.text AS text, b.key AS dst, r.graph AS graph, score, elementId(r) AS ref
