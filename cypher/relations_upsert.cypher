// Upserts the relation texts of a batch, one vector each; each row points at its vector in $vectors.
// params: $rows, $vectors
UNWIND $rows AS row
MERGE (t:Relation {graph: row.graph, text: row.text})
ON CREATE SET t.dataset = row.dataset
WITH t, row
CALL db.create.setNodeVectorProperty(t, 'embedding', $vectors[row.vector])

RETURN count(*) AS written
