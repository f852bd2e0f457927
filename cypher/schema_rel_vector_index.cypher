// Cosine vector index on relationship text embeddings (needs Neo4j >= 5.18).
// params: $options
CREATE VECTOR INDEX rel_embedding IF NOT EXISTS FOR ()-[r:REL]-() ON r.embedding OPTIONS $options
