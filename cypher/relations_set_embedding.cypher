// params: $rows, $vectors
UNWIND $rows AS row
MATCH (t:Relation) WHERE elementId(t) = row.id
CALL db.create.setNodeVectorProperty(t, 'embedding', $vectors[row.vector])

RETURN count(*) AS written
