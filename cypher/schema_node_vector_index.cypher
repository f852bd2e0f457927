// Cosine vector index on node text embeddings; $options carries the dimension of the embedder.
// params: $options
CREATE VECTOR INDEX node_embedding IF NOT EXISTS FOR (n:Node) ON n.embedding OPTIONS $options
