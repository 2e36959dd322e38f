import { Field, ObjectType } from 'type-graphql';

@ObjectType({ description: 'A file format ingest reads (src/ingest/formats.ts): what `dhr ingest` and the console accept.' })
export class IngestFormat {
  @Field(() => String, { description: 'The format’s name: markdown, html, rst, text, json, jsonl.' })
  name!: string;

  @Field(() => String)
  description!: string;

  @Field(() => [String], { description: 'File extensions, lower case with the dot.' })
  extensions!: string[];

  @Field(() => String, {
    nullable: true,
    description: 'The DocumentInput field that carries a file of this format as one document; null for files of documents (JSON, JSONL).',
  })
  field!: string | null;

  @Field(() => Boolean, { description: 'A file of documents with one JSON document per line (JSONL) rather than one value.' })
  lines!: boolean;
}
