// For each frontier node of one graph: its incident triples in both directions (at most $limit, in element id
// order), each with the text, vector and degree of the node at the other end: the learned retriever scores every
// triple it meets with both ends' vectors, and reading them here spares a lookup by key per neighbour.
// params: $graph, $keys, $limit
UNWIND $keys AS key
MATCH (u:Node {graph: $graph, key: key})
USING INDEX u:Node(graph, key)
CALL (u) {
  MATCH (u)-[r:REL]-(v:Node)
  WITH r, v
  ORDER BY elementId(r)
  LIMIT $limit
  RETURN collect({ref: elementId(r), src: startNode(r).key, text: r.text, dst: endNode(r).key, neighbour: v.key,
                  neighbour_text: v.text, neighbour_embedding: v.embedding,
                  neighbour_degree: COUNT { (v)-[:REL]-() }}) AS incident
}
RETURN key, incident
