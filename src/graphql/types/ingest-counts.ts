import { Field, Int, ObjectType } from 'type-graphql';

/** Any class: a mixin's base must take `...args: any[]` (TypeScript's rule for mixin constructors). */
type ClassOf<T = object> = abstract new (...args: any[]) => T;

/**
 * What an ingest did with its documents, for IngestResult (one answered in the request) and
 * IngestJob (one a job writes): declared once, as a mixin, since IngestJob extends JobTimes
 * (type-graphql inherits a decorated base class's fields, one base a class).
 */
export function withIngestCounts<B extends ClassOf>(Base: B) {
  @ObjectType()
  abstract class IngestCounts extends Base {
    @Field(() => Int)
    created!: number;

    @Field(() => Int)
    updated!: number;

    @Field(() => Int)
    unchanged!: number;

    @Field(() => Int, { description: 'Documents that failed alone; their messages are in the outcomes (an ingest job’s: outcomes(status: FAILED)).' })
    failed!: number;
  }
  return IngestCounts;
}
