// params:
MATCH (q:Question)
RETURN q.dataset AS dataset, q.split AS split, count(q) AS questions
