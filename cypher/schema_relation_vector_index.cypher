// Cosine vector index on relation text embeddings, one per (graph, text), not one per edge; $options carries the
// dimension of the embedder.
// params: $options
CREATE VECTOR INDEX relation_embedding IF NOT EXISTS FOR (t:Relation) ON t.embedding OPTIONS $options
