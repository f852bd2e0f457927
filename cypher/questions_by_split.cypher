// params: $dataset, $split
MATCH (q:Question {dataset: $dataset})
WHERE $split IS NULL OR q.split = $split
RETURN q.qid AS qid, q.text AS text, q.answers AS answers, q.split AS split, q.graph AS graph,
       q.topic_entities AS topic_entities
ORDER BY qid
