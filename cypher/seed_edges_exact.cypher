// Exact top edges of one graph by cosine, scored once per relation text (small graphs, and the fallback when
// the index finds too few).
// params: $k, $vector, $graph
MATCH (t:Relation {graph: $graph})
WITH t, vector.similarity.cosine(t.embedding, $vector) AS score
CALL (t) {
  MATCH (a:Node)-[r:REL {graph: $graph, text: t.text}]->(b:Node)
  WITH a, r, b ORDER BY a.key ASC, b.key ASC LIMIT $k
  RETURN a, r, b
}
WITH a, r, b, score
ORDER BY score DESC, a.key ASC, r.text ASC, b.key ASC
LIMIT $k
RETURN a.key AS src, r.text AS text, b.key AS dst, r.graph AS graph, score, elementId(r) AS ref
