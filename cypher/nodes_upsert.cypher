// Upserts nodes; each row points at its vector in $vectors (distinct texts are sent once per batch).
// params: $rows, $vectors
UNWIND $rows AS row
MERGE (n:Node {graph: row.graph, key: row.key})
ON CREATE SET n.dataset = row.dataset
SET n.text = row.text
WITH n, row
CALL db.create.setNodeVectorProperty(n, 'embedding', $vectors[row.vector])

RETURN count(*) AS written
