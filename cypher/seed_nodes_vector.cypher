// Top nodes by cosine from the node vector index, kept only in the requested graph ($graph null: any graph).
// $k is oversampled by the caller because the index ranks across every stored graph (and is searched wider than
// it was built: store.graph_store.NODE_INDEX_BUILD); the best $keep of the graph's hits are returned, each with its
// text and degree (linking weighs what a question says of a name, and how well connected the node is).
// params: $k, $keep, $vector, $graph
CALL db.index.vector.queryNodes('node_embedding', $k, $vector) YIELD node, score
WHERE $graph IS NULL OR node.graph = $graph
WITH node, score
ORDER BY score DESC, node.key ASC
LIMIT $keep
RETURN node.key AS key, node.graph AS graph, score, elementId(node) AS ref, node.text AS text,
       COUNT { (node)-[:REL]-() } AS degree
