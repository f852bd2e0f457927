// What feedback on one recorded retrieval refers to: its question and graph, the answer it was shown, and the
// dataset of the question an earlier feedback on it made (null before the first).
// params: $id
MATCH (r:Retrieval {id: $id})
RETURN r.id AS id, r.question AS question, r.graph AS graph, coalesce(r.answer_keys, []) AS answer_keys,
       r.answer_text AS answer_text, coalesce(r.anchor_keys, []) AS anchor_keys,
       r.feedback_dataset AS feedback_dataset
