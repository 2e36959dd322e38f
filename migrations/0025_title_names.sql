-- The names a question can link a document by: its title's lexemes, and its title head's (the title
-- before a parenthesis, comma, colon or dash: "os.path" of "os.path — Common pathname
-- manipulations", "Korea" of "Korea, South"), with the English analysis BM25 uses. HYBRID_HIERARCHICAL
-- finds the documents whose name the question holds whole (name <@ question's lexemes) by these
-- indexes: an expression index, so every write path (per document, bulk, Citus shards) keeps them
-- without a column of its own. The expressions must stay the same as in
-- src/retrieval/statements/title-links.ts.
CREATE INDEX documents_title_lexemes_idx ON documents
  USING gin (tsvector_to_array(to_tsvector('english'::regconfig, title)));
CREATE INDEX documents_title_head_lexemes_idx ON documents
  USING gin (tsvector_to_array(to_tsvector('english'::regconfig, regexp_replace(title, '\s*(\(|,|:|;|—|–|--| - ).*$', ''))));
