// For each frontier node: its own similarity to the question, and its incident edges best first, capped at
// $fanout, each with the similarity of the edge text and of the node at the other end. Similarities are Neo4j's
// normalised cosine, (1 + cos) / 2; the order is by their sum (the contract of neighbourhood.expand).
// $relation_scores (a map text -> score, or null): edge scores the client already knows (a graph's edges share a
// handful of relation texts); other texts are scored here, from their (:Relation).
// Each frontier node's number of edges comes too: a retriever keeps those of hubs in memory (`retrievers.hubs`).
// params: $graph, $frontier, $vector, $fanout, $relation_scores
UNWIND $frontier AS frontier_key
MATCH (u:Node {graph: $graph, key: frontier_key})
CALL (u) {
  MATCH (u)-[r:REL]-(v:Node)
  WITH r, v, coalesce($relation_scores[r.text],
                      COLLECT { MATCH (t:Relation {graph: $graph, text: r.text})
                                RETURN vector.similarity.cosine(t.embedding, $vector) }[0])
             AS edge_score,
       vector.similarity.cosine(v.embedding, $vector) AS neighbour_score
  ORDER BY edge_score + neighbour_score DESC, v.key ASC, r.text ASC, elementId(r) ASC
  LIMIT $fanout
  RETURN collect({edge_id: elementId(r), src: startNode(r).key, dst: endNode(r).key, text: r.text,
                  neighbour: v.key, neighbour_text: v.text, neighbour_ref: elementId(v), edge_score: edge_score,
                  neighbour_score: neighbour_score}) AS incident
}
RETURN frontier_key AS key, u.text AS text, elementId(u) AS ref, vector.similarity.cosine(u.embedding, $vector) AS score,
       COUNT { (u)-[:REL]-() } AS degree, incident
