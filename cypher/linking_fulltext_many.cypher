// Several Lucene queries against the `node_text` fulltext index in one round trip (one per candidate mention
// of a question); per query as in linking_fulltext: $fetch hits asked for, those of $graph kept, each with its
// degree (ties between nodes of one name go to the better connected).
// params: $queries, $graph, $fetch
UNWIND range(0, size($queries) - 1) AS i
CALL (i) {
  CALL db.index.fulltext.queryNodes('node_text', $queries[i], {limit: $fetch}) YIELD node, score
  RETURN collect({node: node, score: score, degree: COUNT { (node)-[:REL]-() }}) AS hits
}
RETURN i, size(hits) AS fetched,
       [hit IN hits WHERE $graph IS NULL OR hit.node.graph = $graph |
        {key: hit.node.key, text: hit.node.text, graph: hit.node.graph, score: hit.score,
         ref: elementId(hit.node), degree: hit.degree}] AS rows
ORDER BY i
