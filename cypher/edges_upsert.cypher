// Upserts edges between nodes of the same graph; an edge is identified by (src, text, dst). Its vector is its
// relation's ((:Relation {graph, text}), relations_upsert), not a copy on the edge.
// params: $rows
UNWIND $rows AS row
MATCH (a:Node {graph: row.graph, key: row.src})
USING INDEX a:Node(graph, key)
MATCH (b:Node {graph: row.graph, key: row.dst})
USING INDEX b:Node(graph, key)
MERGE (a)-[r:REL {text: row.text}]->(b)
ON CREATE SET r.graph = row.graph, r.dataset = row.dataset
RETURN count(*) AS written
