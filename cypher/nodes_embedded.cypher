// Which of these nodes are already stored with this text and an embedding (what a resumed ingest skips).
// params: $rows
UNWIND $rows AS row
MATCH (n:Node {graph: row.graph, key: row.key})
USING INDEX n:Node(graph, key)
WHERE n.text = row.text AND n.embedding IS NOT NULL
RETURN row.i AS i
