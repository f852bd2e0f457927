// The ids of the questions of one dataset asked over one graph (what `--sync` compares with its source).
// params: $dataset, $graph
MATCH (q:Question {dataset: $dataset})
WHERE q.graph = $graph
RETURN q.qid AS qid
