// One feedback on a recorded retrieval, as the one question of the graph that the retrieval's feedback makes: keyed
// (dataset, qid = the retrieval id) like every question, with the fields `questions_upsert` writes, split 'train'
// and source 'feedback' on creation. $add: node keys that are answers; $reject: node keys that are not (kept in
// not_answers); the verdict's vote is counted. Concurrent feedbacks lose no vote: the transaction holds the graph's
// lock (`feedback_lock_graph`), and each read-modify-write reads the property it sets in the SET itself, which
// Cypher write-locks before reading. The retrieval remembers the dataset, so later feedback finds the same question.
// params: $id, $dataset, $text, $graph, $topic_entities, $add, $reject, $right, $wrong, $given_by
MATCH (r:Retrieval {id: $id})
MERGE (q:Question {dataset: coalesce(r.feedback_dataset, $dataset), qid: $id})
ON CREATE SET q.text = $text, q.graph = $graph, q.split = 'train', q.topic_entities = $topic_entities,
              q.source = 'feedback', q.retrieval = $id, q.created = datetime(), q.answers = [], q.not_answers = [],
              q.votes_right = 0, q.votes_wrong = 0, q.given_by = []
SET r.feedback_dataset = q.dataset
SET q.votes_right = coalesce(q.votes_right, 0) + $right,
    q.votes_wrong = coalesce(q.votes_wrong, 0) + $wrong,
    q.answers = [a IN coalesce(q.answers, []) WHERE NOT a IN $reject] +
                [a IN $add WHERE NOT a IN coalesce(q.answers, [])],
    q.not_answers = [a IN coalesce(q.not_answers, []) WHERE NOT a IN $add] +
                    [a IN $reject WHERE NOT a IN coalesce(q.not_answers, [])],
    q.given_by = CASE WHEN $given_by IS NULL OR $given_by IN coalesce(q.given_by, []) THEN coalesce(q.given_by, [])
                      ELSE coalesce(q.given_by, []) + $given_by END,
    q.updated = datetime()
RETURN q.dataset AS dataset, q.qid AS qid, q.graph AS graph, q.text AS text, q.answers AS answers,
       q.not_answers AS not_answers, q.topic_entities AS topic_entities, q.split AS split, q.retrieval AS retrieval,
       q.votes_right AS votes_right, q.votes_wrong AS votes_wrong, q.given_by AS given_by,
       toString(q.created) AS created, toString(q.updated) AS updated
