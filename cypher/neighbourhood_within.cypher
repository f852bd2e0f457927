// For each frontier node: its incident edges whose other end is one of $within (the element ids of the visited
// nodes, once the node budget is spent: rule 6 of neighbourhood.expand), unordered, each with the similarity of its
// edge text. No vector of a neighbour is read: the client knows every visited node's similarity and ranks these rows
// itself. Ids, not keys: a frontier node's far ends are told apart without reading their properties.
// $relation_scores (a map text -> normalised score, or null): as in neighbourhood_incident.
// params: $graph, $frontier, $within, $vector, $relation_scores
UNWIND $frontier AS frontier_key
MATCH (u:Node {graph: $graph, key: frontier_key})
CALL (u) {
  MATCH (u)-[r:REL]-(v:Node)
  WHERE elementId(v) IN $within
  RETURN collect({edge_id: elementId(r), src: startNode(r).key, dst: endNode(r).key, text: r.text, neighbour: v.key,
                  edge_score: coalesce($relation_scores[r.text],
                                       COLLECT { MATCH (t:Relation {graph: $graph, text: r.text})
                                                 RETURN vector.similarity.cosine(t.embedding, $vector) }[0])})
         AS incident
}
RETURN frontier_key AS key, incident
