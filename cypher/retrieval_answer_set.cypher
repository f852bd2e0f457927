// Keeps on a recorded retrieval the answer a person was shown: the answer nodes' keys, the answer's text and the keys
// of the nodes the question names. Feedback on the retrieval refers to it. A retrieval gone meanwhile (its graph
// dropped) gives no row.
// params: $id, $answer_keys, $answer_text, $anchor_keys
MATCH (r:Retrieval {id: $id})
SET r.answer_keys = $answer_keys, r.answer_text = $answer_text, r.anchor_keys = $anchor_keys, r.answered = datetime()
RETURN r.id AS id
