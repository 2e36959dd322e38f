-- Bulk ingest: a transaction that sets `dhr.bm25_deferred` to 'on' (SET LOCAL)
-- writes many documents and their indexed passages with multi-row statements, then builds their
-- postings and statistics once for the whole batch (bm25_apply_passages, bm25_refresh_documents:
-- src/store/bulk-write.ts). Meanwhile the insert and update triggers skip, so nothing is counted
-- twice and no statement pays for a per-statement recount. Deletes are still counted by their
-- trigger (a re-ingested document's old passages must be subtracted as they were added).
-- Any other transaction, and any setting but 'on', behaves as in 0007.
-- Citus: the shard triggers (migrations/citus/0002) call their own functions, not these, and the
-- bulk path is not used on a distributed store.

CREATE OR REPLACE FUNCTION bm25_deferred() RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT coalesce(current_setting('dhr.bm25_deferred', true), '') = 'on'
$$;

CREATE OR REPLACE FUNCTION bm25_passages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF bm25_deferred() THEN RETURN NULL; END IF;
  PERFORM bm25_apply_passages(1, array_agg(id), array_agg(document_id), array_agg(search))
    FROM new_rows WHERE search IS NOT NULL HAVING count(*) > 0;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION bm25_documents_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM bm25_refresh_documents(array(SELECT id FROM old_rows ORDER BY id));
  ELSIF bm25_deferred() THEN
    RETURN NULL;
  ELSIF TG_OP = 'UPDATE' THEN
    PERFORM bm25_refresh_documents(array(
      SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.summary IS DISTINCT FROM o.summary ORDER BY n.id));
  ELSE
    PERFORM bm25_refresh_documents(array(SELECT id FROM new_rows ORDER BY id));
  END IF;
  RETURN NULL;
END $$;
