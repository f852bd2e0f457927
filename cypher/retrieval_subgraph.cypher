// Exactly the nodes and relationships of one recorded retrieval (the statement `gqa ask` prints for Browser), and,
// for a graph `gqa ingest neo4j` read from this same database (its record's source_element_ids), the source nodes
// behind them: such a graph's node keys are its source nodes' element ids. A key that names no node any more, or
// one of gqa's own, adds nothing.
// params: $id
MATCH (r:Retrieval {id: $id})
OPTIONAL MATCH (g:Graph {id: r.graph, source_element_ids: true})
UNWIND r.node_ids AS ref
MATCH (n:Node) WHERE elementId(n) = ref
OPTIONAL MATCH (n)-[e:REL]->(m:Node) WHERE elementId(e) IN r.rel_ids
OPTIONAL MATCH (s) WHERE g IS NOT NULL AND elementId(s) = n.key AND NOT s:Node|Relation|Graph|Question|Retrieval|GqaMeta
RETURN n, e, m, s
