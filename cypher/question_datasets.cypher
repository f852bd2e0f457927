// Which datasets hold questions asked over one graph, most questions first.
// params: $graph
MATCH (q:Question)
WHERE q.graph = $graph
RETURN q.dataset AS dataset, count(q) AS questions
ORDER BY questions DESC, dataset
