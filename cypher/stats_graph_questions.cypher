// Questions per graph they are asked over, per split.
// params:
MATCH (q:Question)
RETURN q.graph AS graph, q.split AS split, count(q) AS questions
