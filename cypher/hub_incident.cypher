// Every incident edge of each of these nodes (hubs: nodes with many edges), with the far end's key, text, element id
// and vector, and the node's own text, element id and vector: what a retriever keeps in memory to rank a hub's
// edges for later questions without reading them again (`retrievers.hubs`).
// params: $graph, $keys
UNWIND $keys AS key
MATCH (u:Node {graph: $graph, key: key})
USING INDEX u:Node(graph, key)
CALL (u) {
  MATCH (u)-[r:REL]-(v:Node)
  RETURN collect({edge_id: elementId(r), src: startNode(r).key, dst: endNode(r).key, text: r.text,
                  neighbour: v.key, neighbour_text: v.text, neighbour_ref: elementId(v),
                  neighbour_embedding: v.embedding}) AS incident
}
RETURN key, u.text AS text, elementId(u) AS ref, u.embedding AS embedding, incident
