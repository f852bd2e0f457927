// params: $batch
MATCH ()-[r:REL]->() WHERE r.embedding IS NOT NULL
WITH r LIMIT $batch
REMOVE r.embedding
RETURN count(r) AS cleared
