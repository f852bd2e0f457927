// Records one retrieval so that a person can open exactly its subgraph in Neo4j Browser.
// params: $id, $question, $graph, $params, $node_refs, $rel_refs, $textualized, $timings
CREATE (r:Retrieval {id: $id, question: $question, graph: $graph, params: $params, created: datetime(),
                     node_ids: $node_refs, rel_ids: $rel_refs, textualized: $textualized, timings: $timings})
RETURN r.id AS id
