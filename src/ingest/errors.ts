import { DomainError, ErrorCode } from '../errors';

/**
 * The one error type of the ingest pipeline: it names the document (the best label at hand:
 * its key, its title, or where it came from, e.g. `#3` or `file.jsonl:12`) so a batch can report
 * which input failed and why without stopping the others.
 */
export class IngestError extends DomainError {
  constructor(
    readonly document: string,
    readonly problem: string,
  ) {
    super(ErrorCode.INGEST_INVALID, `document "${document}": ${problem}`);
    this.name = 'IngestError';
  }
}
