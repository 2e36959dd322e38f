import { packageRoot } from '../src/paths';
import { useTestServer } from './helpers/server';

/**
 * An unexpected failure (here: the database has lost a table, a real error from a real database)
 * reaches the client as INTERNAL_SERVER_ERROR with a request id, and nothing else: no stack
 * trace, no SQL, no file path. The server logs it in full under the same id.
 */
describe('internal errors', () => {
  const server = useTestServer();

  beforeAll(async () => {
    const post = await query(`mutation { ingestDocuments(documents: [{ title: "Linked", text: "See [[Other]]." }]) { created } }`);
    expect(post.body).toEqual({ data: { ingestDocuments: { created: 1 } } });
    await server.db.exec('DROP TABLE links CASCADE');
  });
  afterEach(() => {
    delete process.env.DHR_DEBUG;
  });

  async function query(text: string): Promise<{ status: number; requestId: string | null; body: any; raw: string }> {
    const reply = await server.post(text);
    return { status: reply.status, requestId: reply.headers.get('x-request-id'), body: reply.body, raw: reply.text };
  }

  const BROKEN = '{ document(key: "Linked") { title outgoingLinks { target } } }';

  it('answers INTERNAL_SERVER_ERROR with the request id and nothing of the failure', async () => {
    const { requestId, body, raw } = await query(BROKEN);
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.data).toEqual({ document: null });
    expect(body.errors).toHaveLength(1);
    const [error] = body.errors;
    expect(error.message).toBe(`internal server error (request id ${requestId})`);
    expect(error.extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR', requestId });
    expect(error.path).toEqual(['document', 'outgoingLinks']);
    // The database said: relation "links" does not exist (in a statement reading links).
    expect(raw).not.toMatch(/stacktrace|\bat \S+ \(|select |from |"links"|relation|does not exist/i);
    expect(raw).not.toContain(packageRoot());
    expect(raw).not.toMatch(/\.(ts|js):\d+/);
  });

  it('logs the failure in full on the server under the same request id', async () => {
    const { requestId } = await query(BROKEN);
    // The JSON log (pino): the error with its message and stack under the request id.
    const entry = server.logs.find((line) => line.requestId === requestId && line.msg === 'internal error');
    expect(entry).toBeDefined();
    expect(entry!.level).toBe(50);
    expect(entry!.err.message).toMatch(/links/);
    expect(entry!.err.stack).toMatch(/\n\s+at /);
  });

  it('shows a stack trace only with DHR_DEBUG=1', async () => {
    process.env.DHR_DEBUG = '1';
    const { body } = await query(BROKEN);
    expect(body.errors[0].extensions.code).toBe('INTERNAL_SERVER_ERROR');
    expect(body.errors[0].extensions.stacktrace.join('\n')).toMatch(/links/);
  });

  it('keeps expected errors as they were: message, code, argument', async () => {
    const { status, body } = await query('{ document(id: "x") { title } }');
    expect(status).toBe(200);
    expect(body.errors[0]).toMatchObject({
      message: 'id must be a Document id (global, or its integer databaseId), got "x"',
      extensions: { code: 'BAD_USER_INPUT', argument: 'id' },
    });
    expect(body.errors[0].extensions.stacktrace).toBeUndefined();
  });
});
