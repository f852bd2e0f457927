// The per-edge vector index of stores written before relation vectors were shared (`gqa db migrate` drops it).
// params:
DROP INDEX rel_embedding IF EXISTS
