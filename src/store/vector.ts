import { toSql } from 'pgvector';

/**
 * pgvector's text form, `[x,y,…]`, from the pgvector package's own codec. Statements cast it
 * (`$n::vector`), so it works on both PGlite and PostgreSQL.
 */
export function vectorLiteral(vector: Float32Array | readonly number[]): string {
  return toSql(Array.from(vector)) as string;
}

/**
 * pgvector's binary form (int16 dim, int16 unused, float4s, big-endian). node-postgres sends a
 * Buffer parameter in binary format, so neither side prints or parses 512 decimal numbers.
 * The pgvector package has no binary codec; this one stays because it measurably wins on the
 * search path: a 512-d `SELECT $1::vector <#> $1::vector` round trip on local PostgreSQL 15 took
 * 47–58 µs with this vs 177–218 µs with the text form (encoding alone: 6 µs vs 72 µs; 2026-11,
 * 2-core VM, 3000 queries each).
 */
export function vectorBinary(vector: Float32Array): Buffer {
  const buf = Buffer.allocUnsafe(4 + 4 * vector.length);
  buf.writeUInt16BE(vector.length, 0);
  buf.writeUInt16BE(0, 2);
  for (let i = 0; i < vector.length; i++) buf.writeFloatBE(vector[i], 4 + 4 * i);
  return buf;
}

/** float4's type oid, built in (pg_type.h), as binary arrays name their element type. */
const FLOAT4_OID = 700;

/**
 * Vectors to write, as one `real[]` parameter in PostgreSQL's binary array form (one dimension,
 * float4 elements, each preceded by its length): a Buffer, which node-postgres and PGlite both send
 * in binary, so the server copies floats where the text form made it parse 512 decimal numbers a
 * vector (bench:vectors: the embed step's writes in 0.26× the time on PGlite, 0.49× on
 * PostgreSQL; docs/benchmarks.md).
 * Statements slice it (vectorAt, vectorsAt); the cast from real[] is exact, float4 in and out.
 * pgvector's own binary input needs a parameter per vector; a batch is one parameter.
 */
export function float4Array(vectors: readonly Float32Array[]): Buffer {
  const total = vectors.reduce((n, v) => n + v.length, 0);
  if (total === 0) {
    const empty = Buffer.alloc(12);
    empty.writeInt32BE(FLOAT4_OID, 8);
    return empty;
  }
  const buf = Buffer.allocUnsafe(20 + 8 * total);
  buf.writeInt32BE(1, 0); // dimensions
  buf.writeInt32BE(0, 4); // no nulls
  buf.writeInt32BE(FLOAT4_OID, 8);
  buf.writeInt32BE(total, 12); // length
  buf.writeInt32BE(1, 16); // lower bound
  let at = 20;
  for (const v of vectors) {
    for (let i = 0; i < v.length; i++) {
      buf.writeInt32BE(4, at);
      buf.writeFloatBE(v[i], at + 4);
      at += 8;
    }
  }
  return buf;
}

/** Where each row's vectors start in a float4Array, given how many each row has, the first row's at `first`. */
export function firstOrdinals(counts: readonly number[], first = 1): number[] {
  let next = first;
  return counts.map((n) => {
    const at = next;
    next += n;
    return at;
  });
}

/** SQL: vector number `ordinal` (from 1) of a float4Array parameter whose vectors all have `dimension` floats. */
export const vectorAt = (param: string, dimension: number, ordinal: string) =>
  `(${param}::real[])[(${ordinal} - 1) * ${dimension} + 1 : (${ordinal}) * ${dimension}]::vector`;

/** SQL: vectors `first` … `first` + `count` − 1 of such a parameter, in order, as vector[]; NULL when count is 0. */
export const vectorsAt = (param: string, dimension: number, first: string, count: string) =>
  `(SELECT array_agg(${vectorAt(param, dimension, `${first} + i`)} ORDER BY i) FROM generate_series(0, ${count} - 1) AS i)`;

/**
 * A `vector[]` as PostgreSQL's array text form, `{"[x,…]","[y,…]"}`, or null for none (an empty
 * list too: no pieces is stored as NULL). Statements cast it (`$n::vector[]`).
 */
export function vectorArrayLiteral(vectors: readonly (Float32Array | readonly number[])[] | undefined): string | null {
  if (!vectors || vectors.length === 0) return null;
  return `{${vectors.map((v) => `"${vectorLiteral(v)}"`).join(',')}}`;
}
