-- BM25 statistics that concurrent writers update without queuing.
--
-- 0007 kept one bm25_stats row per level and one bm25_terms row per (level, lexeme), so every
-- ingest transaction updated the same rows and concurrent ones queued on them until commit. Here
-- each row also has a slot (0-15): a writing transaction takes a slot no other transaction holds
-- (a transaction-level advisory lock, bm25_slot()) and adds its deltas to that slot's rows only,
-- negative ones included (a delete adds −1 to df). Readers already sum over rows (per shard group
-- on Citus, src/retrieval/statements/bm25.ts), so a level's statistics are the sum over its slots.
-- A lone writer always gets slot 0; other slots fill only while writers overlap, and their rows
-- are folded back into slot 0 (bm25_fold_free_slots): by a writer of slot 0 after its changes, and
-- by bm25_fold_stats(), which src/store/bm25-fold.ts runs after the pending-work finisher.
--
-- Lock order: the rows of slot s are written only by the transaction holding slot s's lock, so
-- writers in different slots share no statistics row and cannot wait on each other there. Within
-- a slot 0007's order holds (bm25_stats 'p' → bm25_terms 'p' (sorted) → bm25_stats 'd' →
-- bm25_terms 'd' (sorted)); a fold takes other slots only with pg_try_advisory_xact_lock, so it
-- never waits. A transaction waits for a slot only when all 16 are held (then on one of them).
--
-- Citus: the shard triggers run their own functions (migrations/citus/0002), which leave slot at
-- 0: their statistics are per shard group already (one row each), so writers of different shard
-- groups never met, and bm25_fold_stats() finds nothing to fold. On a store distributed before
-- this migration only the columns are added (its keys and functions stay Citus's own).

ALTER TABLE bm25_stats ADD COLUMN slot integer NOT NULL DEFAULT 0;
ALTER TABLE bm25_terms ADD COLUMN slot integer NOT NULL DEFAULT 0;

-- The slot this transaction writes statistics into: the one it took already, else the first of
-- 16 that no other transaction holds (held to commit), else (all taken) it waits for one.
CREATE FUNCTION bm25_slot() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  taken integer := nullif(current_setting('dhr.bm25_slot', true), '')::integer;
BEGIN
  IF taken IS NOT NULL THEN RETURN taken; END IF;
  FOR i IN 0..15 LOOP
    IF pg_try_advisory_xact_lock(7240315, i) THEN taken := i; EXIT; END IF;
  END LOOP;
  IF taken IS NULL THEN
    taken := pg_backend_pid() % 16;
    PERFORM pg_advisory_xact_lock(7240315, taken);
  END IF;
  PERFORM set_config('dhr.bm25_slot', taken::text, true);
  RETURN taken;
END $$;

-- Adds the rows of every other slot that no transaction holds into slot 0 and deletes them; the
-- caller holds slot 0. Slots whose writer is still open are left for a later fold. Returns the
-- number of slots folded.
CREATE FUNCTION bm25_fold_free_slots() RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  folded integer[];
BEGIN
  -- Every writer of a slot writes its level's bm25_stats row, so this small table names them all.
  folded := array(SELECT DISTINCT slot FROM bm25_stats WHERE slot <> 0 ORDER BY slot);
  IF cardinality(folded) = 0 THEN RETURN 0; END IF;
  folded := array(SELECT s FROM unnest(folded) s WHERE pg_try_advisory_xact_lock(7240315, s) ORDER BY s);
  IF cardinality(folded) = 0 THEN RETURN 0; END IF;
  -- Read after the locks: each statement sees what those slots' writers committed.
  INSERT INTO bm25_stats AS st (level, slot, items, total_length, total_summary)
    SELECT level, 0, sum(items), sum(total_length), sum(total_summary) FROM bm25_stats
    WHERE slot = ANY(folded) GROUP BY level ORDER BY level DESC
    ON CONFLICT (level, slot) DO UPDATE SET items = st.items + excluded.items,
      total_length = st.total_length + excluded.total_length, total_summary = st.total_summary + excluded.total_summary;
  INSERT INTO bm25_terms AS t (level, lexeme, slot, df)
    SELECT level, lexeme, 0, sum(df) FROM bm25_terms WHERE slot = ANY(folded) AND slot <> 0 GROUP BY level, lexeme ORDER BY level DESC, lexeme
    ON CONFLICT (level, lexeme, slot) DO UPDATE SET df = t.df + excluded.df;
  -- (slot <> 0 repeated so even a generic plan reads bm25_terms_slot_idx, not the whole table)
  DELETE FROM bm25_terms WHERE slot = ANY(folded) AND slot <> 0;
  DELETE FROM bm25_stats WHERE slot = ANY(folded);
  RETURN cardinality(folded);
END $$;

-- The background fold: folds what it can now, never waiting. Returns the number of slots folded
-- (0 as well when a writer holds slot 0: that writer folds when it is done).
CREATE FUNCTION bm25_fold_stats() RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM bm25_stats WHERE slot <> 0) THEN RETURN 0; END IF;
  IF NOT pg_try_advisory_xact_lock(7240315, 0) THEN RETURN 0; END IF;
  RETURN bm25_fold_free_slots();
END $$;

-- 0007's functions with the slot (single server). Created under staging names and renamed into
-- place below, so a store already distributed by Citus keeps its own.
CREATE FUNCTION bm25_apply_passages_0013(sign integer, ids integer[], document_ids integer[], searches tsvector[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  total float8;
  avgdl float8;
  my_slot integer;
BEGIN
  CREATE TEMP TABLE IF NOT EXISTS bm25_batch (id integer, document_id integer, lexeme text, tf real, length real) ON COMMIT DROP;
  TRUNCATE bm25_batch;
  INSERT INTO bm25_batch
    SELECT r.id, r.document_id, t.lexeme, coalesce(array_length(t.positions, 1), 1)::real,
           sum(coalesce(array_length(t.positions, 1), 1)) OVER (PARTITION BY r.id)::real
    FROM unnest(ids, document_ids, searches) AS r(id, document_id, search), unnest(r.search) AS t
    WHERE r.search IS NOT NULL;
  SELECT count(DISTINCT id), coalesce(sum(tf), 0) INTO n, total FROM bm25_batch;
  IF n > 0 THEN
    my_slot := bm25_slot();
    INSERT INTO bm25_stats AS st (level, slot, items, total_length) VALUES ('p', my_slot, sign * n, sign * total)
      ON CONFLICT (level, slot) DO UPDATE SET items = st.items + excluded.items, total_length = st.total_length + excluded.total_length;
    -- The level's average length over every slot (others' as last committed): only for impact.
    SELECT sum(total_length) / greatest(sum(items), 1) INTO avgdl FROM bm25_stats WHERE level = 'p';
    INSERT INTO bm25_terms AS bt (level, lexeme, slot, df)
      SELECT 'p', lexeme, my_slot, (sign * count(*))::integer FROM bm25_batch GROUP BY lexeme ORDER BY lexeme
      ON CONFLICT (level, lexeme, slot) DO UPDATE SET df = bt.df + excluded.df;
    IF sign > 0 THEN
      INSERT INTO passage_postings (lexeme, document_id, passage_id, tf, length, impact)
        SELECT lexeme, document_id, id, tf, length, tf / (tf + 1.2 * (0.25 + 0.75 * length / greatest(avgdl, 1)))
        FROM bm25_batch;
    ELSE
      DELETE FROM passage_postings pp USING bm25_batch b
        WHERE pp.lexeme = b.lexeme AND pp.document_id = b.document_id AND pp.passage_id = b.id;
    END IF;
    PERFORM bm25_refresh_documents(array(SELECT DISTINCT document_id FROM bm25_batch ORDER BY 1));
  END IF;
END $$;

CREATE FUNCTION bm25_refresh_documents_0013(ids integer[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  removed bigint;
  removed_body float8;
  removed_summary float8;
  my_slot integer;
BEGIN
  IF coalesce(cardinality(ids), 0) = 0 THEN RETURN; END IF;
  my_slot := bm25_slot();
  SELECT count(*), coalesce(sum(length_body), 0), coalesce(sum(length_summary), 0)
    INTO removed, removed_body, removed_summary
    FROM document_lengths WHERE document_id = ANY(ids);
  -- Written even when nothing is removed: a slot with bm25_terms rows always has a bm25_stats row.
  INSERT INTO bm25_stats AS st (level, slot, items, total_length, total_summary)
    VALUES ('d', my_slot, -removed, -removed_body, -removed_summary)
    ON CONFLICT (level, slot) DO UPDATE SET items = st.items + excluded.items,
      total_length = st.total_length + excluded.total_length, total_summary = st.total_summary + excluded.total_summary;
  INSERT INTO bm25_terms AS bt (level, lexeme, slot, df)
    SELECT 'd', lexeme, my_slot, -count(*)::integer FROM document_postings WHERE document_id = ANY(ids) GROUP BY lexeme ORDER BY lexeme
    ON CONFLICT (level, lexeme, slot) DO UPDATE SET df = bt.df + excluded.df;
  DELETE FROM document_postings WHERE document_id = ANY(ids);
  DELETE FROM document_lengths WHERE document_id = ANY(ids);

  CREATE TEMP TABLE IF NOT EXISTS bm25_doc_batch (document_id integer, lexeme text, tf_body real, tf_summary real) ON COMMIT DROP;
  TRUNCATE bm25_doc_batch;
  INSERT INTO bm25_doc_batch
    SELECT document_id, lexeme, sum(tf_body), sum(tf_summary) FROM (
      SELECT p.document_id, t.lexeme, coalesce(array_length(t.positions, 1), 1)::real AS tf_body, 0::real AS tf_summary
        FROM passages p, unnest(p.search) t WHERE p.document_id = ANY(ids) AND p.search IS NOT NULL
      UNION ALL
      SELECT d.id, t.lexeme, 0, coalesce(array_length(t.positions, 1), 1)::real
        FROM documents d, unnest(to_tsvector('english'::regconfig, d.summary)) t WHERE d.id = ANY(ids)
    ) x GROUP BY document_id, lexeme;
  INSERT INTO document_lengths (document_id, length_body, length_summary)
    SELECT document_id, sum(tf_body), sum(tf_summary) FROM bm25_doc_batch GROUP BY document_id;
  INSERT INTO bm25_stats AS st (level, slot, items, total_length, total_summary)
    SELECT 'd', my_slot, count(*), coalesce(sum(length_body), 0), coalesce(sum(length_summary), 0)
    FROM document_lengths WHERE document_id = ANY(ids)
    ON CONFLICT (level, slot) DO UPDATE SET items = st.items + excluded.items,
      total_length = st.total_length + excluded.total_length, total_summary = st.total_summary + excluded.total_summary;
  INSERT INTO bm25_terms AS bt (level, lexeme, slot, df)
    SELECT 'd', lexeme, my_slot, count(*) FROM bm25_doc_batch GROUP BY lexeme ORDER BY lexeme
    ON CONFLICT (level, lexeme, slot) DO UPDATE SET df = bt.df + excluded.df;
  INSERT INTO document_postings (lexeme, document_id, tf_body, tf_summary, length_body, length_summary, impact)
    SELECT b.lexeme, b.document_id, b.tf_body, b.tf_summary, l.length_body, l.length_summary,
           (b.tf_body + b.tf_summary) / (b.tf_body + b.tf_summary
             + 1.2 * (0.25 + 0.75 * (l.length_body + l.length_summary) / greatest((s.total_length + s.total_summary) / greatest(s.items, 1), 1)))
    FROM bm25_doc_batch b JOIN document_lengths l USING (document_id)
    CROSS JOIN (SELECT sum(items) AS items, sum(total_length) AS total_length, sum(total_summary) AS total_summary
                FROM bm25_stats WHERE level = 'd') s;
  -- Slot 0's writer folds the slots of writers that have finished, so rows stay few without a
  -- background step (a lone writer has nothing to fold: one read of a small table).
  IF my_slot = 0 THEN PERFORM bm25_fold_free_slots(); END IF;
END $$;

DO $$
DECLARE
  distributed boolean := false;
BEGIN
  IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
    EXECUTE $q$SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'bm25_stats'::regclass)$q$ INTO distributed;
  END IF;
  IF distributed THEN
    DROP FUNCTION bm25_apply_passages_0013(integer, integer[], integer[], tsvector[]);
    DROP FUNCTION bm25_refresh_documents_0013(integer[]);
    RETURN;
  END IF;
  -- Same constraint names as before (migrations/citus/0001 replaces them by name).
  ALTER TABLE bm25_stats DROP CONSTRAINT bm25_stats_pkey, ADD CONSTRAINT bm25_stats_pkey PRIMARY KEY (level, slot);
  ALTER TABLE bm25_terms DROP CONSTRAINT bm25_terms_pkey, ADD CONSTRAINT bm25_terms_pkey PRIMARY KEY (level, lexeme, slot);
  -- The rows a fold reads: only those outside slot 0, so the index stays small.
  CREATE INDEX bm25_terms_slot_idx ON bm25_terms (slot, level, lexeme) WHERE slot <> 0;
  -- Triggers and callers name these functions at run time (plpgsql), so a rename swaps them in.
  DROP FUNCTION bm25_apply_passages(integer, integer[], integer[], tsvector[]);
  DROP FUNCTION bm25_refresh_documents(integer[]);
  ALTER FUNCTION bm25_apply_passages_0013(integer, integer[], integer[], tsvector[]) RENAME TO bm25_apply_passages;
  ALTER FUNCTION bm25_refresh_documents_0013(integer[]) RENAME TO bm25_refresh_documents;
END $$;
