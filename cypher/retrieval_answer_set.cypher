// Keeps on a recorded retrieval the answer a person was shown: the answer nodes' keys, the answer's text, the keys
// of the nodes the question names, and how sure the answer was (confidence: the calibrated probability that it is
// right, null where nothing estimated it; unsure: too low to call it sure). Feedback on the retrieval refers to it,
// and the answers awaiting feedback are listed least confident first (`feedback_unsure`). A retrieval gone
// meanwhile (its graph dropped) gives no row.
// params: $id, $answer_keys, $answer_text, $anchor_keys, $confidence, $unsure
MATCH (r:Retrieval {id: $id})
SET r.answer_keys = $answer_keys, r.answer_text = $answer_text, r.anchor_keys = $anchor_keys,
    r.confidence = $confidence, r.unsure = $unsure, r.answered = datetime()
RETURN r.id AS id
