// One stored vector per relation text of one graph (all edges with a text share its vector).
// params: $graph, $texts
UNWIND $texts AS wanted
CALL (wanted) {
  MATCH (:Node {graph: $graph})-[r:REL {text: wanted}]->()
  RETURN r.embedding AS embedding
  LIMIT 1
}
RETURN wanted AS text, embedding
