import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ErrorCode, rateLimited, refusalHttp, reportedCode } from '../src/errors';
import { databaseFaultError, storageFaultError } from '../src/graphql/db-faults';
import { refusalError } from '../src/graphql/errors';
import { packageRoot } from '../src/paths';

/**
 * One table (REFUSALS in src/errors.ts) gives every refusal its HTTP status and Retry-After, and
 * one helper (refusalError in src/graphql/errors.ts) builds every GraphQLError the API raises:
 * no status, header or error is written by hand beside them.
 */
const root = packageRoot();
const HELPER = 'src/graphql/errors.ts';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('the error table', () => {
  it('has no GraphQLError built in src outside the one helper', () => {
    const found: string[] = [];
    for (const path of sources(join(root, 'src'))) {
      const text = readFileSync(path, 'utf8');
      const file = relative(root, path);
      for (const pattern of [/new GraphQLError\(/g, /extends GraphQLError\b/g]) {
        const count = text.match(pattern)?.length ?? 0;
        if (count > 0) found.push(`${file}: ${count} × ${pattern.source}`);
      }
    }
    expect(found).toEqual([`${HELPER}: 1 × new GraphQLError\\(`]);
  });

  it('writes Retry-After in one place per layer, from the table', () => {
    const found = sources(join(root, 'src'))
      .filter((path) => /['"`]retry-after['"`]/i.test(readFileSync(path, 'utf8')))
      .map((path) => relative(root, path));
    // GraphQL errors' extensions.http (Apollo writes it), and the HTTP layer's own refusals.
    expect(found.sort()).toEqual([HELPER, 'src/http/refusal.ts']);
  });

  it('gives a status where the code refuses the request, and only a status that holds anywhere to an error raised while the operation runs', () => {
    expect(refusalHttp(ErrorCode.BAD_USER_INPUT, undefined, true)).toEqual({ status: 400 });
    expect(refusalHttp(ErrorCode.BAD_USER_INPUT, undefined, false)).toBeUndefined();
    expect(refusalHttp(ErrorCode.TIMEOUT, undefined, true)).toEqual({ status: 503, retryAfter: '1' });
    expect(refusalHttp(ErrorCode.TIMEOUT, undefined, false)).toBeUndefined();
    expect(refusalHttp(ErrorCode.UNAUTHENTICATED, undefined, false)).toEqual({ status: 401 });
    expect(refusalHttp(ErrorCode.OVERLOADED, undefined, false)).toEqual({ status: 503, retryAfter: '1' });
    // NOT_FOUND refuses a path that is off (MCP); a resolver's is a field error.
    expect(refusalHttp(ErrorCode.NOT_FOUND, undefined, true)).toEqual({ status: 404 });
    expect(refusalHttp(ErrorCode.NOT_FOUND, undefined, false)).toBeUndefined();
    expect(refusalHttp(ErrorCode.CONFLICT, undefined, true)).toBeUndefined();
    // 405 is reported as BAD_REQUEST, the code clients already handle.
    expect(refusalHttp(ErrorCode.METHOD_NOT_ALLOWED, undefined, true)).toEqual({ status: 405 });
    expect(reportedCode(ErrorCode.METHOD_NOT_ALLOWED)).toBe(ErrorCode.BAD_REQUEST);
    expect(reportedCode(ErrorCode.NOT_FOUND)).toBe(ErrorCode.NOT_FOUND);
  });

  it('takes a rate limit’s Retry-After from the limiter’s wait, in whole seconds', () => {
    const refused = rateLimited(1_200, (s) => `retry in ${s} s`);
    expect(refused).toMatchObject({ code: ErrorCode.RATE_LIMITED, message: 'retry in 2 s', details: { retryAfterSeconds: 2 } });
    expect(refusalHttp(refused.code, refused.details, true)).toEqual({ status: 429, retryAfter: '2' });
    expect(rateLimited(10, (s) => `${s}`).details).toEqual({ retryAfterSeconds: 1 });
  });

  it('builds the GraphQL error with the code, argument, details and the table’s HTTP head', () => {
    const error = refusalError(ErrorCode.BAD_USER_INPUT, 'q is too long', { argument: 'q' });
    expect(error.message).toBe('q is too long');
    expect(error.extensions).toEqual({ code: 'BAD_USER_INPUT', argument: 'q', http: { status: 400 } });
    const headOf = (e: ReturnType<typeof refusalError>) => {
      const http = e.extensions.http as { status: number; headers?: Map<string, string> } | undefined;
      return http && { status: http.status, retryAfter: http.headers?.get('retry-after') };
    };
    expect(headOf(storageFaultError('full'))).toEqual({ status: 503, retryAfter: '30' });
    expect(storageFaultError('full').extensions).toMatchObject({ code: 'STORAGE_UNAVAILABLE', storage: 'full' });
    expect(headOf(databaseFaultError('unavailable', 1000))).toEqual({ status: 503, retryAfter: '2' });
    expect(headOf(databaseFaultError('busy', 1000))).toEqual({ status: 503, retryAfter: '1' });
    // A statement timeout and a conflict are field errors: HTTP 200 beside the data.
    expect(databaseFaultError('timeout', 1000).extensions).toEqual({ code: 'TIMEOUT' });
    expect(databaseFaultError('conflict', 1000).extensions).toEqual({ code: 'CONFLICT', retry: true });
  });
});
