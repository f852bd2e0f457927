// Which of these edges are already stored with an embedding.
// params: $rows
UNWIND $rows AS row
MATCH (:Node {graph: row.graph, key: row.src})-[r:REL {text: row.text}]->(:Node {graph: row.graph, key: row.dst})
WHERE r.embedding IS NOT NULL
RETURN DISTINCT row.i AS i
