// Deletes the given questions of one dataset (by qid).
// params: $dataset, $qids
UNWIND $qids AS qid
MATCH (q:Question {dataset: $dataset, qid: qid})
DELETE q
RETURN count(q) AS deleted
