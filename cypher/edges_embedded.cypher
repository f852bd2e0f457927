// Which of these edges are already stored with their relation's vector (what a resumed ingest skips).
// params: $rows
UNWIND $rows AS row
MATCH (:Node {graph: row.graph, key: row.src})-[r:REL {text: row.text}]->(:Node {graph: row.graph, key: row.dst})
MATCH (t:Relation {graph: row.graph, text: row.text})
WHERE t.embedding IS NOT NULL
RETURN DISTINCT row.i AS i
