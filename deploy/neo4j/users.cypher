// Least-privilege Neo4j users for kg-agent (Neo4j 5 Enterprise or Aura; run as an admin,
// e.g. `cypher-shell -u neo4j -d system -f deploy/neo4j/users.cypher`, after replacing the
// passwords). docs/neo4j.md ("Users and privileges") explains each grant. The Cypher lint
// gate parses this file with Neo4j's own parser (tools/cypher-lint/check.sh).
//
// The reader: what the query tools use (spin variables neo4j_reader_user/_password).
CREATE USER kg_reader IF NOT EXISTS SET PASSWORD 'change-me-reader' CHANGE NOT REQUIRED;
GRANT ROLE reader TO kg_reader;
//
// The writer: actions, approvals, the action log, documents (neo4j_user/_password).
CREATE ROLE kg_writer IF NOT EXISTS;
GRANT ACCESS ON DATABASE neo4j TO kg_writer;
GRANT MATCH {*} ON GRAPH neo4j TO kg_writer;
GRANT EXECUTE PROCEDURE db.* ON DBMS TO kg_writer;
// Nodes the catalog's effects and kg-agent's own bookkeeping create and delete.
GRANT CREATE ON GRAPH neo4j NODES Payment, ActionLog, ActionApproval, Document, Chunk TO kg_writer;
GRANT DELETE ON GRAPH neo4j NODES Payment, Document, Chunk TO kg_writer;
// Relationships: the action log links to what it changed, documents to their chunks and
// the entities they mention; a node is deleted with its relationships.
GRANT CREATE ON GRAPH neo4j RELATIONSHIPS * TO kg_writer;
GRANT DELETE ON GRAPH neo4j RELATIONSHIPS * TO kg_writer;
// Properties the effects set (and the row lock `_kg_lock` set and removed in one statement).
GRANT SET PROPERTY {*} ON GRAPH neo4j NODES PurchaseOrder, Supplier, Account, Payment, ActionLog, ActionApproval, Document, Chunk TO kg_writer;
CREATE USER kg_writer_user IF NOT EXISTS SET PASSWORD 'change-me-writer' CHANGE NOT REQUIRED;
GRANT ROLE kg_writer TO kg_writer_user;
//
// Schema: POST /actions/setup and the first document ingest create indexes and unique
// keys. Run them once as an admin, or grant this role to the writer for that moment.
CREATE ROLE kg_schema IF NOT EXISTS;
GRANT INDEX MANAGEMENT ON DATABASE neo4j TO kg_schema;
GRANT CONSTRAINT MANAGEMENT ON DATABASE neo4j TO kg_schema;
