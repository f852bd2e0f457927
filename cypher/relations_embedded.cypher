// Which of these (graph, text) relations are already stored with a vector (what a resumed ingest skips).
// params: $rows
UNWIND $rows AS row
MATCH (t:Relation {graph: row.graph, text: row.text})
WHERE t.embedding IS NOT NULL
RETURN row.i AS i
