// The first $k edges of one relation text of one graph in (source key, target key) order: the edges of a text
// tie on similarity, and this is the order `retrieval.seeds` breaks their tie in.
// params: $graph, $text, $k
MATCH (a:Node)-[r:REL {graph: $graph, text: $text}]->(b:Node)
WITH a, r, b ORDER BY a.key ASC, b.key ASC LIMIT $k
RETURN a.key AS src, r.text AS text, b.key AS dst, elementId(r) AS ref
