// Exactly the nodes and relationships of one recorded retrieval (the statement `gqa ask` prints for Browser).
// params: $id
MATCH (r:Retrieval {id: $id})
MATCH (n:Node) WHERE elementId(n) IN r.node_ids
OPTIONAL MATCH (n)-[e:REL]->(m:Node) WHERE elementId(e) IN r.rel_ids
RETURN n, e, m
