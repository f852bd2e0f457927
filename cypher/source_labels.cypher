// The node labels of a source database (`gqa ingest neo4j`), less those gqa owns.
// params: $own
CALL db.labels() YIELD label
WITH label WHERE NOT label IN $own
RETURN label ORDER BY label
