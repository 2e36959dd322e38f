-- Citus only: BM25 postings and statistics and the pending-work records, maintained on each shard
-- by the triggers of migrations 0007 and 0008, now run where the rows are.
--
-- A trigger on a shard may only touch its own shard group (a query on a distributed table from
-- inside a shard query would be a nested distributed query, outside the shard's transaction). So
-- each shard group gets a schema on its worker, dhr_g<hash range start>, whose views carry the
-- distributed tables' names and point at that group's shards; the trigger puts that schema first
-- on search_path and then runs the single-node functions unchanged. Statistics (bm25_stats,
-- bm25_terms) are per shard group; retrieval sums them, so idf and average lengths are corpus-wide.

SET LOCAL citus.multi_shard_modify_mode TO 'sequential';

CREATE FUNCTION dhr_shard_group_schema(shard_table text) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT 'dhr_g' || replace(s.shardminvalue, '-', 'm') FROM pg_dist_shard s
  WHERE s.shardid = substring(shard_table FROM '_(\d+)$')::bigint
$$;

-- On a worker: the schema of views for the shard group of shard `shard_table` (any colocated
-- shard's name), and its bm25_stats rows under a shard key that hashes into the group.
CREATE FUNCTION dhr_make_shard_group(shard_table text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  g text := dhr_shard_group_schema(shard_table);
  lo int;
  hi int;
  k int;  -- a shard key value that hashes into this group
  t text;
BEGIN
  SELECT s.shardminvalue::int, s.shardmaxvalue::int INTO lo, hi FROM pg_dist_shard s
    WHERE s.shardid = substring(shard_table FROM '_(\d+)$')::bigint;
  -- Local objects of this worker, not distributed ones.
  PERFORM set_config('citus.enable_ddl_propagation', 'off', true);
  EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I', g);
  FOREACH t IN ARRAY ARRAY['documents', 'sections', 'passages', 'links', 'passage_postings', 'document_postings',
                           'document_lengths', 'pending_documents', 'bm25_stats', 'bm25_terms'] LOOP
    EXECUTE format('CREATE OR REPLACE VIEW %I.%I AS SELECT * FROM public.%I', g, t,
      (SELECT t || '_' || s.shardid FROM pg_dist_shard s
        WHERE s.logicalrelid = t::regclass AND s.shardminvalue::int = lo));
  END LOOP;
  -- 0007's functions say ON CONFLICT (level, lexeme): within one shard group shard_key is one
  -- value, so this shard-local index is the same constraint as the table's key.
  EXECUTE format('CREATE UNIQUE INDEX IF NOT EXISTS %I ON public.%I (level, lexeme)',
    'bm25_terms_local_' || lo, (SELECT 'bm25_terms_' || s.shardid FROM pg_dist_shard s
                                  WHERE s.logicalrelid = 'bm25_terms'::regclass AND s.shardminvalue::int = lo));
  -- Citus hashes an int distribution column with hashint4.
  k := 0;
  WHILE hashint4(k) NOT BETWEEN lo AND hi LOOP k := k + 1; END LOOP;
  EXECUTE format('ALTER VIEW %I.bm25_terms ALTER COLUMN shard_key SET DEFAULT %s', g, k);
  EXECUTE format('ALTER VIEW %I.bm25_stats ALTER COLUMN shard_key SET DEFAULT %s', g, k);
  -- A view takes no default from its table: the pending records' generation gets its own.
  EXECUTE format($q$ALTER VIEW %I.pending_documents ALTER COLUMN generation SET DEFAULT nextval('public.pending_documents_generation_seq')$q$, g);
  EXECUTE format('ALTER VIEW %I.pending_documents ALTER COLUMN recorded_at SET DEFAULT now()', g);
  EXECUTE format($q$INSERT INTO %I.bm25_stats (level) VALUES ('p'), ('d') ON CONFLICT DO NOTHING$q$, g);
  PERFORM set_config('citus.enable_ddl_propagation', 'on', true);
  RETURN g;
END $$;

-- Puts the shard group of the firing shard first on search_path (making its views if a shard
-- move left this worker without them); returns the previous path to restore.
CREATE FUNCTION dhr_enter_shard_group(shard_table text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  previous text := current_setting('search_path');
  g text := dhr_shard_group_schema(shard_table);
BEGIN
  IF to_regclass(quote_ident(g) || '.bm25_terms') IS NULL THEN
    PERFORM dhr_make_shard_group(shard_table);
  END IF;
  PERFORM set_config('search_path', quote_ident(g) || ', public', true);
  RETURN previous;
END $$;

-- 0007's functions, less their temporary tables: a write that touches two workers commits with
-- two-phase commit, which PostgreSQL refuses for a transaction that used temporary objects. Each
-- statement reads the batch from these functions instead (same rows, same lock order).
CREATE FUNCTION bm25_batch_rows(ids integer[], document_ids integer[], searches tsvector[])
RETURNS TABLE (id integer, document_id integer, lexeme text, tf real, length real) LANGUAGE sql IMMUTABLE AS $$
  SELECT r.id, r.document_id, t.lexeme, coalesce(array_length(t.positions, 1), 1)::real,
         sum(coalesce(array_length(t.positions, 1), 1)) OVER (PARTITION BY r.id)::real
  FROM unnest(ids, document_ids, searches) AS r(id, document_id, search), unnest(r.search) AS t
  WHERE r.search IS NOT NULL
$$;

-- The documents' lexemes (full text and summary); reads the shard group's views (search_path).
CREATE FUNCTION bm25_document_rows(ids integer[])
RETURNS TABLE (document_id integer, lexeme text, tf_body real, tf_summary real) LANGUAGE sql STABLE AS $$
  SELECT document_id, lexeme, sum(tf_body), sum(tf_summary) FROM (
    SELECT p.document_id, t.lexeme, coalesce(array_length(t.positions, 1), 1)::real AS tf_body, 0::real AS tf_summary
      FROM passages p, unnest(p.search) t WHERE p.document_id = ANY(ids) AND p.search IS NOT NULL
    UNION ALL
    SELECT d.id, t.lexeme, 0, coalesce(array_length(t.positions, 1), 1)::real
      FROM documents d, unnest(to_tsvector('english'::regconfig, d.summary)) t WHERE d.id = ANY(ids)
  ) x GROUP BY document_id, lexeme
$$;

CREATE OR REPLACE FUNCTION bm25_apply_passages(sign integer, ids integer[], document_ids integer[], searches tsvector[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  total float8;
  avgdl float8;
BEGIN
  SELECT count(DISTINCT b.id), coalesce(sum(b.tf), 0) INTO n, total FROM bm25_batch_rows(ids, document_ids, searches) b;
  IF n > 0 THEN
    UPDATE bm25_stats SET items = items + sign * n, total_length = total_length + sign * total
      WHERE level = 'p' RETURNING total_length / greatest(items, 1) INTO avgdl;
    IF sign > 0 THEN
      INSERT INTO bm25_terms (level, lexeme, df)
        SELECT 'p', b.lexeme, count(*) FROM bm25_batch_rows(ids, document_ids, searches) b GROUP BY b.lexeme ORDER BY b.lexeme
        ON CONFLICT (level, lexeme) DO UPDATE SET df = bm25_terms.df + excluded.df;
      INSERT INTO passage_postings (lexeme, document_id, passage_id, tf, length, impact)
        SELECT b.lexeme, b.document_id, b.id, b.tf, b.length, b.tf / (b.tf + 1.2 * (0.25 + 0.75 * b.length / greatest(avgdl, 1)))
        FROM bm25_batch_rows(ids, document_ids, searches) b;
    ELSE
      UPDATE bm25_terms t SET df = t.df - c.n
        FROM (SELECT b.lexeme, count(*) AS n FROM bm25_batch_rows(ids, document_ids, searches) b GROUP BY b.lexeme ORDER BY b.lexeme) c
        WHERE t.level = 'p' AND t.lexeme = c.lexeme;
      DELETE FROM passage_postings pp USING bm25_batch_rows(ids, document_ids, searches) b
        WHERE pp.lexeme = b.lexeme AND pp.document_id = b.document_id AND pp.passage_id = b.id;
    END IF;
    PERFORM bm25_refresh_documents(array(
      SELECT DISTINCT b.document_id FROM bm25_batch_rows(ids, document_ids, searches) b ORDER BY 1));
  END IF;
END $$;

CREATE OR REPLACE FUNCTION bm25_refresh_documents(ids integer[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  removed bigint;
  removed_body float8;
  removed_summary float8;
BEGIN
  IF coalesce(cardinality(ids), 0) = 0 THEN RETURN; END IF;
  SELECT count(*), coalesce(sum(length_body), 0), coalesce(sum(length_summary), 0)
    INTO removed, removed_body, removed_summary
    FROM document_lengths WHERE document_id = ANY(ids);
  UPDATE bm25_stats SET items = items - removed, total_length = total_length - removed_body,
                        total_summary = total_summary - removed_summary
    WHERE level = 'd';
  UPDATE bm25_terms t SET df = t.df - c.n
    FROM (SELECT lexeme, count(*) AS n FROM document_postings WHERE document_id = ANY(ids) GROUP BY lexeme ORDER BY lexeme) c
    WHERE t.level = 'd' AND t.lexeme = c.lexeme;
  DELETE FROM document_postings WHERE document_id = ANY(ids);
  DELETE FROM document_lengths WHERE document_id = ANY(ids);

  INSERT INTO document_lengths (document_id, length_body, length_summary)
    SELECT b.document_id, sum(b.tf_body), sum(b.tf_summary) FROM bm25_document_rows(ids) b GROUP BY b.document_id;
  UPDATE bm25_stats s SET items = s.items + a.n, total_length = s.total_length + a.body, total_summary = s.total_summary + a.summary
    FROM (SELECT count(*) AS n, coalesce(sum(length_body), 0) AS body, coalesce(sum(length_summary), 0) AS summary
          FROM document_lengths WHERE document_id = ANY(ids)) a
    WHERE s.level = 'd';
  INSERT INTO bm25_terms (level, lexeme, df)
    SELECT 'd', b.lexeme, count(*) FROM bm25_document_rows(ids) b GROUP BY b.lexeme ORDER BY b.lexeme
    ON CONFLICT (level, lexeme) DO UPDATE SET df = bm25_terms.df + excluded.df;
  INSERT INTO document_postings (lexeme, document_id, tf_body, tf_summary, length_body, length_summary, impact)
    SELECT b.lexeme, b.document_id, b.tf_body, b.tf_summary, l.length_body, l.length_summary,
           (b.tf_body + b.tf_summary) / (b.tf_body + b.tf_summary
             + 1.2 * (0.25 + 0.75 * (l.length_body + l.length_summary) / greatest((s.total_length + s.total_summary) / greatest(s.items, 1), 1)))
    FROM bm25_document_rows(ids) b JOIN document_lengths l USING (document_id) CROSS JOIN bm25_stats s WHERE s.level = 'd';
END $$;

CREATE FUNCTION dhr_citus_passages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE previous text := dhr_enter_shard_group(TG_TABLE_NAME);
BEGIN
  PERFORM bm25_apply_passages(1, array_agg(id), array_agg(document_id), array_agg(search))
    FROM new_rows WHERE search IS NOT NULL HAVING count(*) > 0;
  PERFORM set_config('search_path', previous, true);
  RETURN NULL;
END $$;

CREATE FUNCTION dhr_citus_passages_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE previous text := dhr_enter_shard_group(TG_TABLE_NAME);
BEGIN
  PERFORM bm25_apply_passages(-1, array_agg(id), array_agg(document_id), array_agg(search))
    FROM old_rows WHERE search IS NOT NULL HAVING count(*) > 0;
  PERFORM set_config('search_path', previous, true);
  RETURN NULL;
END $$;

CREATE FUNCTION dhr_citus_passages_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE previous text := dhr_enter_shard_group(TG_TABLE_NAME);
BEGIN
  PERFORM bm25_apply_passages(-1, array_agg(o.id), array_agg(o.document_id), array_agg(o.search))
    FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE o.search IS NOT NULL AND (n.search IS DISTINCT FROM o.search OR n.document_id <> o.document_id)
    HAVING count(*) > 0;
  PERFORM bm25_apply_passages(1, array_agg(n.id), array_agg(n.document_id), array_agg(n.search))
    FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE n.search IS NOT NULL AND (n.search IS DISTINCT FROM o.search OR n.document_id <> o.document_id)
    HAVING count(*) > 0;
  PERFORM set_config('search_path', previous, true);
  RETURN NULL;
END $$;

CREATE FUNCTION dhr_citus_documents_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE previous text := dhr_enter_shard_group(TG_TABLE_NAME);
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM bm25_refresh_documents(array(SELECT id FROM old_rows ORDER BY id));
  ELSIF TG_OP = 'UPDATE' THEN
    PERFORM bm25_refresh_documents(array(
      SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.summary IS DISTINCT FROM o.summary ORDER BY n.id));
    INSERT INTO pending_documents (document_id)
      SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
      WHERE n.content_hash IS DISTINCT FROM o.content_hash ORDER BY n.id
      ON CONFLICT (document_id) DO UPDATE SET generation = nextval('pending_documents_generation_seq'), recorded_at = now();
  ELSE
    PERFORM bm25_refresh_documents(array(SELECT id FROM new_rows ORDER BY id));
    INSERT INTO pending_documents (document_id) SELECT id FROM new_rows ORDER BY id
      ON CONFLICT (document_id) DO UPDATE SET generation = nextval('pending_documents_generation_seq'), recorded_at = now();
  END IF;
  PERFORM set_config('search_path', previous, true);
  RETURN NULL;
END $$;

SET LOCAL citus.enable_unsafe_triggers TO on;
CREATE TRIGGER passages_bm25_insert AFTER INSERT ON passages
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION dhr_citus_passages_inserted();
CREATE TRIGGER passages_bm25_delete AFTER DELETE ON passages
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION dhr_citus_passages_deleted();
CREATE TRIGGER passages_bm25_update AFTER UPDATE ON passages
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION dhr_citus_passages_updated();
CREATE TRIGGER documents_bm25_insert AFTER INSERT ON documents
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION dhr_citus_documents_changed();
CREATE TRIGGER documents_bm25_update AFTER UPDATE ON documents
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION dhr_citus_documents_changed();
CREATE TRIGGER documents_bm25_delete AFTER DELETE ON documents
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION dhr_citus_documents_changed();
