// Upserts edges between nodes of the same graph; an edge is identified by (src, text, dst).
// params: $rows, $vectors
UNWIND $rows AS row
MATCH (a:Node {graph: row.graph, key: row.src})
MATCH (b:Node {graph: row.graph, key: row.dst})
MERGE (a)-[r:REL {text: row.text}]->(b)
ON CREATE SET r.graph = row.graph, r.dataset = row.dataset
WITH r, row
CALL db.create.setRelationshipVectorProperty(r, 'embedding', $vectors[row.vector])

RETURN count(*) AS written
