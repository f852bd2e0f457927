// params:
CREATE CONSTRAINT retrieval_id IF NOT EXISTS FOR (r:Retrieval) REQUIRE r.id IS UNIQUE
