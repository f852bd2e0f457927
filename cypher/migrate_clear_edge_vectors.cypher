// `gqa db migrate`, step 2 of 2 (auto-commit, after step 1 has given every relation text its vector): the
// per-edge copies go.
// params: $batch
MATCH ()-[r:REL]->() WHERE r.embedding IS NOT NULL
CALL (r) {
  REMOVE r.embedding
} IN TRANSACTIONS OF $batch ROWS
