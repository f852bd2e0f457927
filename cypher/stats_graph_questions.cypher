// Questions per graph they are asked over, per dataset and split.
// params:
MATCH (q:Question)
RETURN q.graph AS graph, q.dataset AS dataset, q.split AS split, count(q) AS questions
