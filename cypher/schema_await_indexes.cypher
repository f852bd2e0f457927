// Blocks until every index is online (vector and fulltext indexes populate asynchronously).
// params: $seconds
CALL db.awaitIndexes($seconds)
