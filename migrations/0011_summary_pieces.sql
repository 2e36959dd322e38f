-- Several summary vectors: a summary longer than the document encoder's budget is
-- clipped in its one vector, so its pieces that fit the budget are embedded too and the document
-- stage can take the best of them (max-sim; pgvector has no multi-vector operator, so a column of
-- vectors scored over a stage's candidates, never indexed). NULL: the summary fits in one vector,
-- or the row was embedded before this column (a re-embedding job of scope ALL fills it).
ALTER TABLE document_embeddings ADD COLUMN summary_pieces vector[];
