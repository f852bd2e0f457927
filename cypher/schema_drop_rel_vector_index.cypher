// params:
DROP INDEX rel_embedding IF EXISTS
