// params:
CREATE CONSTRAINT question_key IF NOT EXISTS FOR (q:Question) REQUIRE (q.dataset, q.qid) IS UNIQUE
