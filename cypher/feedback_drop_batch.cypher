// Deletes up to $batch of the questions people's feedback made over one graph (no other question).
// params: $graph, $batch
MATCH (q:Question)
WHERE q.graph = $graph AND q.source = 'feedback'
WITH q LIMIT $batch
DELETE q
RETURN count(q) AS deleted
