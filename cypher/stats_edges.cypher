// params:
MATCH ()-[r:REL]->()
RETURN r.dataset AS dataset, count(r) AS edges, count(r.embedding) AS embedded
