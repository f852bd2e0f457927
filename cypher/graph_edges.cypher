// Every edge of one graph with its text (vectors come once per text: graph_relations).
// params: $graph
MATCH (a:Node {graph: $graph})-[r:REL]->(b:Node)
RETURN a.key AS src, r.text AS text, b.key AS dst, elementId(r) AS ref
