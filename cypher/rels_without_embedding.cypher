// params: $batch
MATCH ()-[r:REL]->() WHERE r.embedding IS NULL
RETURN elementId(r) AS id, r.text AS text LIMIT $batch
