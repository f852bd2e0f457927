// The ids of the questions of one dataset asked over one graph (what `--sync` compares with its source). Questions
// that people's feedback made (`gqa feedback`) come from no source file, so a sync leaves them alone.
// params: $dataset, $graph
MATCH (q:Question {dataset: $dataset})
WHERE q.graph = $graph AND coalesce(q.source, '') <> 'feedback'
RETURN q.qid AS qid
