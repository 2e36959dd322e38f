-- A bulk ingest into a store without postings writes them into bare tables and builds their keys
-- and indexes once at the end, by sorting (docs/benchmarks.md, "Postings indexed once
-- at the end of a load": 1.39× the bulk path on a fresh store). The statement that builds each one
-- is recorded here in the transaction that drops it, so a load that dies half way leaves what the
-- next open of the store, or the next bulk ingest, needs to build them (src/store/deferred-indexes.ts).
CREATE TABLE deferred_indexes (
  name        text PRIMARY KEY,
  table_name  text NOT NULL,
  definition  text NOT NULL
);
