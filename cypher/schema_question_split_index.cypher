// params:
CREATE INDEX question_split IF NOT EXISTS FOR (q:Question) ON (q.dataset, q.split)
