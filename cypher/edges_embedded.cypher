// Which of these edges are already stored with their relation's vector (what a resumed ingest skips).
// params: $rows
UNWIND $rows AS row
MATCH (a:Node {graph: row.graph, key: row.src})-[r:REL {text: row.text}]->(b:Node {graph: row.graph, key: row.dst})
USING INDEX a:Node(graph, key)
USING INDEX b:Node(graph, key)
MATCH (t:Relation {graph: row.graph, text: row.text})
WHERE t.embedding IS NOT NULL
RETURN DISTINCT row.i AS i
