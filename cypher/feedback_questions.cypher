// The questions people's feedback made over one graph, oldest first.
// params: $graph
MATCH (q:Question)
WHERE q.graph = $graph AND q.source = 'feedback'
RETURN q.dataset AS dataset, q.qid AS qid, q.graph AS graph, q.text AS text, q.answers AS answers,
       q.not_answers AS not_answers, q.topic_entities AS topic_entities, q.split AS split, q.retrieval AS retrieval,
       q.votes_right AS votes_right, q.votes_wrong AS votes_wrong, q.given_by AS given_by,
       toString(q.created) AS created, toString(q.updated) AS updated
ORDER BY q.created, q.qid
