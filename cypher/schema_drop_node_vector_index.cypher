// Used when the embedder (and so the dimension) changes.
// params:
DROP INDEX node_embedding IF EXISTS
