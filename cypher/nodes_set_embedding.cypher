// params: $rows, $vectors
UNWIND $rows AS row
MATCH (n:Node) WHERE elementId(n) = row.id
CALL db.create.setNodeVectorProperty(n, 'embedding', $vectors[row.vector])

RETURN count(*) AS written
