// `--sync`: deletes the given edges (src, text, dst) of one graph, those its source no longer holds.
// params: $graph, $rows
UNWIND $rows AS row
MATCH (:Node {graph: $graph, key: row.src})-[r:REL {text: row.text}]->(:Node {graph: $graph, key: row.dst})
DELETE r
RETURN count(r) AS deleted
