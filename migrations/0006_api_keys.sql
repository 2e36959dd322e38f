-- API keys for the GraphQL server (dhr keys create|list|revoke). Only a SHA-256 of each key is
-- stored: keys are 32 random bytes, so a fast unsalted hash is enough (nothing to brute-force,
-- unlike a password) and lets a request find its key through the unique index in one lookup.
-- key_prefix is the first characters of the key, shown in listings so a person can tell keys apart.
CREATE TABLE api_keys (
  id serial PRIMARY KEY,
  name text NOT NULL,
  role text NOT NULL CHECK (role IN ('admin', 'reader')),
  key_hash text NOT NULL UNIQUE,
  key_prefix text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
