import { Query, Resolver } from 'type-graphql';
import { DOCUMENT_FILE_FORMATS, SOURCE_FORMATS } from '../../ingest/formats';
import { IngestFormat } from '../types/formats';

/** The table of ingest formats, for clients (the console's upload) that map files to DocumentInput fields. */
const FORMATS: IngestFormat[] = [
  ...Object.entries(SOURCE_FORMATS).map(([name, f]) => ({ name, description: f.description, extensions: [...f.extensions], field: f.field, lines: false })),
  ...Object.entries(DOCUMENT_FILE_FORMATS).map(([name, f]) => ({
    name,
    description: f.description,
    extensions: [...f.extensions],
    field: null,
    lines: f.lines,
  })),
];

@Resolver()
export class IngestFormatResolver {
  @Query(() => [IngestFormat], { description: 'The file formats ingest reads, and the DocumentInput field each arrives in.' })
  ingestFormats(): IngestFormat[] {
    return FORMATS;
  }
}
