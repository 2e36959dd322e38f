/** An evaluation data set: a corpus given as ingest input, and questions with their gold. */
import type { DocumentInput } from '../ingest/types';

/** A section a question's answer lies in: a document key and the section titles below the document title. */
export interface GoldSection {
  document: string;
  path: string[];
}

export interface EvalQuestion {
  id: string;
  question: string;
  /** Answer strings (any one counts), for Top-k answer accuracy; absent when the source has none. */
  answers?: string[];
  /** Keys of the documents that hold the answer. */
  goldDocuments: string[];
  /** Sections that hold the answer, where known. */
  goldSections: GoldSection[];
  /** The question's form, where a set asks in several (the entity–attribute sets: the gold section's title, the object's kind): `--points` breaks its figures down by it. */
  shape?: string;
}

export interface EvalDataset {
  name: string;
  /** The corpus's name when another set shares it (its cached load is reused): the set's name otherwise. */
  corpus?: string;
  /** One line: where corpus and questions come from. */
  description: string;
  documents: DocumentInput[];
  questions: EvalQuestion[];
  /** Counts from building it (documents read, questions kept and dropped…), for the report. */
  stats: Record<string, number | string>;
  /** Failure examples may quote a question's source; kept small. */
  notes: string[];
}
