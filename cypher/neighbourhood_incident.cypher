// For each frontier node: its incident edges, best first, capped at $fanout. Score: similarity of the edge text
// plus similarity of the node at the other end to the question (Neo4j's normalised cosine, (1 + cos) / 2).
// params: $graph, $frontier, $vector, $fanout
UNWIND $frontier AS frontier_key
MATCH (u:Node {graph: $graph, key: frontier_key})
CALL (u) {
  MATCH (u)-[r:REL]-(v:Node)
  WITH r, v, vector.similarity.cosine(r.embedding, $vector) + vector.similarity.cosine(v.embedding, $vector) AS score
  ORDER BY score DESC, v.key ASC, r.text ASC, elementId(r) ASC
  LIMIT $fanout
  RETURN collect({edge_id: elementId(r), src: startNode(r).key, dst: endNode(r).key, text: r.text,
                  neighbour: v.key, score: score}) AS incident
}
RETURN frontier_key AS key, incident
