-- Per-corpus retrieval settings: the ranking parameters a question leaves out, per
-- mode, above the server's environment and the modes' built-in defaults (src/retrieval/parameters.ts).
-- Versioned: a change adds a row and never edits one, so what was in force and why stays readable,
-- and a rollback restores the settings of the version before (another new row).
CREATE TABLE retrieval_settings (
  version     integer     PRIMARY KEY CHECK (version > 0),
  -- { "<MODE>": { "<parameter>": value, ... }, ... }; checked against the parameter table on write
  settings    jsonb       NOT NULL CHECK (jsonb_typeof(settings) = 'object'),
  -- who or what set them: an API key's name, "cli", "tune", "rollback of <n>"
  set_by      text        NOT NULL,
  note        text,
  -- what justified them (dhr tune: the data it used, the scores of the chosen point and of the defaults)
  evidence    jsonb,
  -- the version in force when this one was set (null: none); a rollback goes back to it
  previous    integer     REFERENCES retrieval_settings (version),
  created_at  timestamptz NOT NULL DEFAULT now()
);
