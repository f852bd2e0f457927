// params: $rows
UNWIND $rows AS row
MERGE (q:Question {dataset: row.dataset, qid: row.qid})
SET q.text = row.text, q.answers = row.answers, q.split = row.split, q.graph = row.graph,
    q.topic_entities = row.topic_entities
RETURN count(*) AS written
