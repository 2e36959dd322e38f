import { useEffect, useState, type FormEvent } from 'react';
import { adminKey, gql } from './api';
import { href } from './route';

const INGEST = `mutation($docs: [DocumentInput!]!) {
  ingestDocuments(documents: $docs) { created updated unchanged failed outcomes { index key status documentId passages message } job { id } }
}`;
// A large ingest is a job (over the server's INGEST_JOB_DOCUMENTS / INGEST_JOB_BYTES): followed until it ends.
const INGEST_JOB = `query($id: ID!) { ingestJob(id: $id) { id status documents { done total } passages { done } etaSeconds error
  outcomes { index key status documentId passages message } } }`;
interface IngestJob {
  id: string;
  status: string;
  documents: { done: number; total: number };
  passages: { done: number };
  etaSeconds: number | null;
  error: string | null;
  outcomes: Outcome[];
}
const MODELS = `{ embeddingModels { name dimension roles documents passages staleDocuments source } stats { documents passages } }`;
const REEMBED = `mutation($model: String!) { reembed(model: $model, scope: ALL) { id } }`;
const JOB = `query($id: ID!) { job(id: $id) { id status error documents { done total } passages { done total } ratePerSecond etaSeconds } }`;
const ACTIVATE = `mutation($model: String!) { activateEmbeddingModel(model: $model) { name roles } }`;

interface Outcome {
  index: number;
  key: string | null;
  status: string;
  documentId: string | null;
  passages: number;
  message: string | null;
}
interface Model {
  name: string;
  dimension: number;
  roles: string[];
  documents: number;
  passages: number;
  staleDocuments: number;
  source: string | null;
}
interface Job {
  id: string;
  status: string;
  error: string | null;
  documents: { done: number; total: number };
  passages: { done: number; total: number };
  ratePerSecond: number | null;
  etaSeconds: number | null;
}

const FORMATS = `{ ingestFormats { extensions field lines } }`;

/** The server's table of ingest formats (src/ingest/formats.ts), read once: the upload accepts what ingest reads. */
interface Format {
  extensions: string[];
  field: string | null;
  lines: boolean;
}

const extensionOf = (name: string): string => (/\.[^.]*$/.exec(name)?.[0] ?? '').toLowerCase();

/**
 * A file as ingest input, by its format: JSON as one document or an array of them, JSONL a
 * document a line, text titled by the file's name, any other format its text in the format's
 * field (the source's own title heading, as `dhr ingest` reads it).
 */
async function fileInputs(file: File, formats: Format[]): Promise<unknown[]> {
  const format = formats.find((f) => f.extensions.includes(extensionOf(file.name)));
  if (!format) throw new Error(`${file.name}: ingest does not read ${extensionOf(file.name) || 'files without an extension'}`);
  const text = await file.text();
  if (format.field === null) {
    if (format.lines)
      return text
        .split(/\r?\n/)
        .filter((line) => line.trim())
        .map((line) => JSON.parse(line) as unknown);
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed : [parsed];
  }
  if (format.field === 'text') return [{ title: file.name.replace(/\.[^.]*$/, ''), text, key: file.name }];
  return [{ [format.field]: text, key: file.name }];
}

function KeyForm({ onChange }: { onChange: () => void }) {
  const [value, setValue] = useState(adminKey.get());
  const save = (e: FormEvent) => {
    e.preventDefault();
    adminKey.set(value.trim());
    onChange();
  };
  return (
    <form className="key" onSubmit={save}>
      <label>
        <span>Admin key (kept for this tab only)</span>
        <input name="key" type="password" autoComplete="off" value={value} onChange={(e) => setValue(e.target.value)} placeholder="dhr_…" />
      </label>
      <button type="submit">Use key</button>
      {adminKey.get() && (
        <button type="button" onClick={() => (adminKey.set(''), setValue(''), onChange())}>
          Forget key
        </button>
      )}
    </form>
  );
}

function Ingest() {
  const [markdown, setMarkdown] = useState('');
  const [files, setFiles] = useState<FileList | null>(null);
  const [outcomes, setOutcomes] = useState<Outcome[] | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [formats, setFormats] = useState<Format[]>([]);
  useEffect(
    () =>
      void gql<{ ingestFormats: Format[] }>(FORMATS).then(
        (d) => setFormats(d.ingestFormats),
        (e: Error) => setError(e.message),
      ),
    [],
  );
  const [job, setJob] = useState<IngestJob | null>(null);
  useEffect(() => {
    if (!job || !['QUEUED', 'RUNNING'].includes(job.status)) return;
    const t = setTimeout(
      () =>
        gql<{ ingestJob: IngestJob }>(INGEST_JOB, { id: job.id }).then(
          (d) => (setJob(d.ingestJob), setOutcomes(d.ingestJob.outcomes)),
          (e: Error) => setError(e.message),
        ),
      1000,
    );
    return () => clearTimeout(t);
  }, [job]);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const docs: unknown[] = markdown.trim() ? [{ markdown }] : [];
      for (const file of Array.from(files ?? [])) docs.push(...(await fileInputs(file, formats)));
      if (docs.length === 0) throw new Error('paste Markdown or choose files first');
      const d = await gql<{ ingestDocuments: { outcomes: Outcome[]; job: { id: string } | null } }>(INGEST, { docs }, true);
      setOutcomes(d.ingestDocuments.outcomes);
      const queued = d.ingestDocuments.job;
      setJob(queued ? (await gql<{ ingestJob: IngestJob }>(INGEST_JOB, { id: queued.id })).ingestJob : null);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="ingest-title">
      <h3 id="ingest-title">Ingest</h3>
      <form className="ingest" onSubmit={(e) => void submit(e)}>
        <label>
          <span>Markdown (a leading “# Title” is the title; headings are the sections)</span>
          <textarea name="markdown" rows={8} value={markdown} onChange={(e) => setMarkdown(e.target.value)} />
        </label>
        <label>
          <span>or files ({formats.flatMap((f) => f.extensions).join(', ') || 'loading formats…'})</span>
          <input name="files" type="file" multiple accept={formats.flatMap((f) => f.extensions).join(',')} onChange={(e) => setFiles(e.target.files)} />
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Ingesting…' : 'Ingest'}
        </button>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {job && (
        <p aria-live="polite">
          Ingest job {job.id} {job.status.toLowerCase()}: {job.documents.done}/{job.documents.total} documents, {job.passages.done} passages
          {job.etaSeconds !== null && ` · about ${Math.ceil(job.etaSeconds)} s left`}
          {job.error && <span className="error"> {job.error}</span>}
        </p>
      )}
      {outcomes && (
        <ul className="outcomes" aria-live="polite">
          {outcomes.map((o) => (
            <li key={o.index} className={`outcome ${o.status.toLowerCase()}`}>
              {o.status} {o.documentId ? <a href={href(`document/${o.documentId}`)}>{o.key ?? `document ${o.documentId}`}</a> : o.key} · {o.passages} passages
              {o.message && <span className="error"> {o.message}</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Models() {
  const [models, setModels] = useState<Model[]>([]);
  const [stats, setStats] = useState<{ documents: number; passages: number } | null>(null);
  const [job, setJob] = useState<Job | null>(null);
  const [error, setError] = useState('');
  const refresh = () =>
    gql<{ embeddingModels: Model[]; stats: { documents: number; passages: number } }>(MODELS).then(
      (d) => (setModels(d.embeddingModels), setStats(d.stats)),
      (e: Error) => setError(e.message),
    );
  useEffect(() => void refresh(), []);
  // Watches the job until it ends.
  useEffect(() => {
    if (!job || !['QUEUED', 'RUNNING'].includes(job.status)) return;
    const t = setTimeout(
      () =>
        gql<{ job: Job }>(JOB, { id: job.id }).then(
          (d) => (setJob(d.job), refresh()),
          (e: Error) => setError(e.message),
        ),
      1000,
    );
    return () => clearTimeout(t);
  }, [job]);
  const act = (f: () => Promise<unknown>) => () => {
    setError('');
    f().then(refresh, (e: Error) => setError(e.message));
  };
  return (
    <section aria-labelledby="models-title">
      <h3 id="models-title">Embedding models</h3>
      {stats && (
        <p className="muted">
          {stats.documents} documents, {stats.passages} passages in the store
        </p>
      )}
      <table className="models">
        <thead>
          <tr>
            <th scope="col">model</th>
            <th scope="col">dimension</th>
            <th scope="col">roles</th>
            <th scope="col">documents</th>
            <th scope="col">passages</th>
            <th scope="col">actions</th>
          </tr>
        </thead>
        <tbody>
          {models.map((m) => (
            <tr key={m.name}>
              <td>{m.name}</td>
              <td>{m.dimension}</td>
              <td>{m.roles.join(', ') || '—'}</td>
              <td>{m.documents}</td>
              <td>{m.passages}</td>
              <td>
                <button
                  type="button"
                  onClick={act(async () => setJob({ ...(await gql<{ reembed: Job }>(REEMBED, { model: m.name }, true)).reembed, status: 'QUEUED' } as Job))}
                >
                  Re-embed
                </button>{' '}
                <button type="button" onClick={act(() => gql(ACTIVATE, { model: m.name }, true))}>
                  Activate
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {job && job.documents && (
        <div className="job" aria-live="polite">
          job {job.id}: {job.status}
          <label>
            documents <progress max={job.documents.total || 1} value={job.documents.done} /> {job.documents.done}/{job.documents.total}
          </label>
          <label>
            passages <progress max={job.passages.total || 1} value={job.passages.done} /> {job.passages.done}/{job.passages.total}
          </label>
          {job.etaSeconds != null && <span> · about {Math.ceil(job.etaSeconds)} s left</span>}
          {job.error && <span className="error"> {job.error}</span>}
        </div>
      )}
      {job && !job.documents && <p className="job">job {job.id} queued</p>}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

export function AdminView() {
  const [, rerender] = useState(0);
  return (
    <section aria-labelledby="admin-title">
      <h2 id="admin-title">Admin</h2>
      <KeyForm onChange={() => rerender((n) => n + 1)} />
      {adminKey.get() ? (
        <>
          <Ingest />
          <Models />
        </>
      ) : (
        <p className="muted">
          Enter an admin key (printed by <code>npm start</code>, or <code>dhr keys create --role admin</code>) to ingest and manage models.
        </p>
      )}
    </section>
  );
}
