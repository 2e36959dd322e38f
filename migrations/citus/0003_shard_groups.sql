-- Citus only: every shard group's schema of views now (0002; the triggers would make a missing one,
-- but two first writers at once would race). Its own step: the workers see 0002's functions only
-- once that transaction committed, and these commands run on connections of their own.
DO $$
DECLARE failed text;
BEGIN
  SELECT string_agg(nodename || ':' || nodeport || ' ' || result, '; ') INTO failed
    FROM run_command_on_placements('documents', $c$SELECT dhr_make_shard_group('%s')$c$) WHERE NOT success;
  IF failed IS NOT NULL THEN
    RAISE EXCEPTION 'could not prepare the shard groups: %', failed;
  END IF;
END $$;
