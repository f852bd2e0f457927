// params: $rows, $vectors
UNWIND $rows AS row
MATCH ()-[r:REL]->() WHERE elementId(r) = row.id
CALL db.create.setRelationshipVectorProperty(r, 'embedding', $vectors[row.vector])

RETURN count(*) AS written
