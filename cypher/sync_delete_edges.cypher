// `--sync`: deletes the given edges (src, text, dst) of one graph, those its source no longer holds.
// params: $graph, $rows
UNWIND $rows AS row
MATCH (a:Node {graph: $graph, key: row.src})-[r:REL {text: row.text}]->(b:Node {graph: $graph, key: row.dst})
USING INDEX a:Node(graph, key)
USING INDEX b:Node(graph, key)
DELETE r
RETURN count(r) AS deleted
