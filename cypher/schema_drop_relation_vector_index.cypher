// params:
DROP INDEX relation_embedding IF EXISTS
