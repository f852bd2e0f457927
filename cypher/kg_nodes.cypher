// Every node of one graph (streamed), with its element id, and its vector when $with_embeddings is true.
// params: $graph, $with_embeddings
MATCH (n:Node {graph: $graph})
RETURN n.key AS key, n.text AS text, CASE WHEN $with_embeddings THEN n.embedding END AS embedding,
       elementId(n) AS ref
