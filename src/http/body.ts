import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number, readonly size: number | undefined) {
    super(
      `request body ${size !== undefined ? `of ${size} bytes ` : ''}is over the limit of ${limit} bytes (MAX_BODY_BYTES)`,
    );
  }
}

/**
 * Reads a request body, refusing it as soon as it passes `limit` bytes: a declared
 * Content-Length over the limit is refused before any byte is read, a chunked body when the
 * running total passes it. Never buffers more than `limit` bytes.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw new BodyTooLargeError(limit, Number(declared));
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyTooLargeError(limit, undefined);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
