// Nodes whose text matches a Lucene query in the `node_text` fulltext index, best first. The index spans every
// stored graph, so $fetch hits are asked for and those of $graph (all, when $graph is null) kept; `fetched`
// tells the caller whether asking for more could find more.
// params: $query, $graph, $fetch
CALL db.index.fulltext.queryNodes('node_text', $query, {limit: $fetch}) YIELD node, score
WITH collect({node: node, score: score}) AS hits
RETURN size(hits) AS fetched,
       [hit IN hits WHERE $graph IS NULL OR hit.node.graph = $graph |
        {key: hit.node.key, text: hit.node.text, graph: hit.node.graph, score: hit.score,
         ref: elementId(hit.node)}] AS rows
