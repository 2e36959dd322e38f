-- An ingest job's document outcome carries the warnings a synchronous ingest answers with (a
-- heading without text titled by its source or merged into the section before it), so a job's
-- outcomes say what its documents' parsers read other than as written.
ALTER TABLE ingest_job_documents ADD COLUMN warnings text[] NOT NULL DEFAULT '{}';
