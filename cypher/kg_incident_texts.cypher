// For each frontier node of one graph: its incident triples in both directions (at most $limit, in element id
// order), with the keys and texts of both ends. Relation-path retrieval reads texts, not vectors, while it
// walks (vectors are fetched for the chosen subgraph only).
// params: $graph, $keys, $limit
UNWIND $keys AS key
MATCH (u:Node {graph: $graph, key: key})
USING INDEX u:Node(graph, key)
CALL (u) {
  MATCH (u)-[r:REL]-(v:Node)
  WITH r, v
  ORDER BY elementId(r)
  LIMIT $limit
  WITH r, v, startNode(r) AS s, endNode(r) AS d
  RETURN collect({ref: elementId(r), src: s.key, src_text: s.text, text: r.text, dst: d.key, dst_text: d.text,
                  neighbour: v.key}) AS incident
}
RETURN key, incident
