import type { IncomingMessage } from 'node:http';
import { DomainError, ErrorCode } from '../errors';

export class BodyTooLargeError extends DomainError {
  constructor(
    readonly limit: number,
    readonly size: number | undefined,
  ) {
    super(ErrorCode.PAYLOAD_TOO_LARGE, `request body ${size !== undefined ? `of ${size} bytes ` : ''}is over the limit of ${limit} bytes (MAX_BODY_BYTES)`);
  }
}

/**
 * Reads a request body, refusing it as soon as it passes `limit` bytes: a declared
 * Content-Length over the limit is refused before any byte is read, a chunked body when the
 * running total passes it. Never buffers more than `limit` bytes.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(new BodyTooLargeError(limit, Number(declared)));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      // Stop keeping data but leave the socket open, so the 413 can still be written.
      req.off('data', onData);
      req.off('end', onEnd);
      chunks.length = 0;
      reject(new BodyTooLargeError(limit, undefined));
    };
    const onEnd = () => resolve(Buffer.concat(chunks, size));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', reject);
  });
}
