-- The names a question can link a document by (HYBRID_HIERARCHICAL's title links): its title, and
-- its title head (the title before a parenthesis, comma, colon or dash: "os.path" of "os.path ---
-- Common pathname manipulations", "Korea" of "Korea, South"), each as the set of its English
-- lexemes (the analysis BM25 uses): a tsvector without positions, 'korea' 'south'. A question names
-- a document when a run of its own lexemes, as such a set, equals one of these ("South Korea"),
-- so a B-tree finds the documents a question names with one probe per run of at most 6 lexemes. Stored generated columns, so every write path (per document, bulk, Citus shards) keeps
-- them without knowing of them. (A GIN index on the lexeme arrays, tried first, returns every title
-- sharing any word with the question, 600 of 10,000 documents a question in bench:hybrid, each
-- rechecked on the heap.)
ALTER TABLE documents
  ADD COLUMN title_name tsvector GENERATED ALWAYS AS (strip(to_tsvector('english'::regconfig, title))) STORED,
  ADD COLUMN title_head_name tsvector GENERATED ALWAYS AS (
    strip(to_tsvector('english'::regconfig, regexp_replace(title, '\s*(\(|,|:|;|—|–|--| - ).*$', '')))) STORED;
CREATE INDEX documents_title_name_idx ON documents (title_name);
CREATE INDEX documents_title_head_name_idx ON documents (title_head_name);
