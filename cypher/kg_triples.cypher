// Every triple of one graph (streamed), to build an in-memory KnowledgeGraph. Relation vectors come separately
// (kg_relation_vectors): a graph has few relation texts and many edges.
// params: $graph
MATCH (a:Node {graph: $graph})-[r:REL]->(b:Node)
RETURN a.key AS src, r.text AS text, b.key AS dst, elementId(r) AS ref
