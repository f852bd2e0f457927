// The answers of one graph that wait for a person's judgement: recorded retrievals with an answer shown and no
// feedback question yet (none made, or it was dropped with `gqa feedback drop`), the least confident first (those
// whose confidence nothing estimated last), then the newest.
// params: $graph, $limit
MATCH (r:Retrieval)
WHERE r.graph = $graph AND r.answered IS NOT NULL
  AND (r.feedback_dataset IS NULL OR NOT EXISTS { MATCH (q:Question {dataset: r.feedback_dataset, qid: r.id}) })
WITH r, r.confidence AS confidence
ORDER BY confidence IS NULL, confidence, r.created DESC, r.id
LIMIT $limit
RETURN r.id AS retrieval_id, r.question AS question, r.answer_text AS answer_text,
       coalesce(r.answer_keys, []) AS answer_keys, confidence, coalesce(r.unsure, false) AS unsure,
       toString(r.created) AS created
