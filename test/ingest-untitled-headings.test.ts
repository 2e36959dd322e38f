/**
 * One odd heading never refuses a page: a Markdown heading that reads as markup only (`### <CR>`,
 * from a page converted from Perl's POD) is titled by its source, an empty one (Markdown `###`,
 * HTML `<h2><a id="x"></a></h2>`, an image without alt) merges into the section before it, and the
 * outcome says so, through the API's real ingest (answered at once, and as a job) on a real store.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ingestJobOptions, JobWorker } from '../src/pipeline/jobs/worker';
import { packageRoot } from '../src/paths';
import { createTestApi, dataOf, type TestApi } from './helpers/api';

const fixture = (name: string) => readFileSync(join(packageRoot(), 'test', 'fixtures', 'untitled-headings', name), 'utf8');
const DOCS = [
  { key: 'readline-keys', title: 'Term::ReadLine::Keys', markdown: fixture('readline-keys.md') },
  { key: 'widget-guide', html: fixture('widget-guide.html') },
];
const OUTCOME = 'index key title status passages message warnings';
const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created failed outcomes { ${OUTCOME} } job { id } } }`;
const JOB = `query($id: ID!) { ingestJob(id: $id) { status outcomes { ${OUTCOME} } } }`;

const MARKDOWN_WARNINGS = [
  'the heading at line 17 has no text once its markup is read: titled by its source, "<CR>"',
  'the heading at line 22 has no text once its markup is read: titled by its source, "<Tab>"',
  'the heading at line 27 has no text once its markup is read: titled by its source, "<C-W>"',
  'the heading at line 31 is empty: its text is read as part of the section before it',
  'the heading at line 37 has no text once its markup is read: titled by its source, "<Up>"',
];
const HTML_WARNINGS = [
  'the <h2> at line 10 (anchor "configuration") has no text: its text is read as part of the section before it',
  'the <h3> at line 16 has no text: its text is read as part of the section before it',
];

async function sections(api: TestApi, key: string): Promise<{ path: string; text: string }[]> {
  return api.testDb.db.query<{ path: string; text: string }>(
    `SELECT array_to_string(p.title_path, ' > ') AS path, p.text FROM passages p JOIN documents d ON d.id = p.document_id
     WHERE d.key = $1 ORDER BY p.ordinal`,
    [key],
  );
}

describe('pages with headings that have no text of their own', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createTestApi();
  }, 120_000);
  afterAll(async () => api?.close());

  it('ingests both pages, each outcome carrying its warnings', async () => {
    const answer = dataOf(await api.exec(INGEST, { docs: DOCS })).ingestDocuments;
    expect(answer).toMatchObject({ created: 2, failed: 0, job: null });
    expect(answer.outcomes).toEqual([
      expect.objectContaining({ key: 'readline-keys', status: 'CREATED', message: null, warnings: MARKDOWN_WARNINGS }),
      expect.objectContaining({ key: 'widget-guide', title: 'Widget guide', status: 'CREATED', message: null, warnings: HTML_WARNINGS }),
    ]);
  });

  it('stores the Markdown page with the keys as sections and the empty heading’s text in the section before it', async () => {
    const rows = await sections(api, 'readline-keys');
    expect(rows.map((r) => r.path)).toEqual([
      'Term::ReadLine::Keys > NAME',
      'Term::ReadLine::Keys > SYNOPSIS',
      'Term::ReadLine::Keys > DESCRIPTION',
      'Term::ReadLine::Keys > DESCRIPTION > Editing keys > <CR>',
      'Term::ReadLine::Keys > DESCRIPTION > Editing keys > <Tab>',
      'Term::ReadLine::Keys > DESCRIPTION > Editing keys > <C-W>',
      'Term::ReadLine::Keys > DESCRIPTION > History keys > <Up>',
      'Term::ReadLine::Keys > SEE ALSO',
    ]);
    expect(rows[5].text).toBe('Deletes the word before the cursor. Keys the terminal does not name are read as their byte values.');
  });

  it('stores the HTML page with image and code headings titled, and the empty ones’ text in the section before them', async () => {
    const rows = await sections(api, 'widget-guide');
    expect(rows.map((r) => [r.path, r.text])).toEqual([
      ['Widget guide', 'How to set up and run the widget service.'],
      [
        'Widget guide > Installing',
        "Install the package with your distribution's package manager. The configuration lives in /etc/widget/widget.conf, one setting a line.",
      ],
      ['Widget guide > The widget daemon', 'The daemon listens on port 8080 and logs to the journal.'],
      [
        'Widget guide > The widget daemon > `widgetctl reload`',
        'Reloads the configuration without dropping connections. A reload that fails keeps the old configuration.',
      ],
    ]);
  });

  it('keeps the warnings in a job’s outcomes', async () => {
    const jobs = await createTestApi({ INGEST_JOB_DOCUMENTS: '1' });
    try {
      const answer = dataOf(await jobs.exec(INGEST, { docs: DOCS })).ingestDocuments;
      expect(answer.job).not.toBeNull();
      const worker = new JobWorker(jobs.testDb.db, undefined, { batchSize: 32, ingest: ingestJobOptions(jobs.config) });
      while (await worker.step());
      const job = dataOf(await jobs.exec(JOB, { id: answer.job.id })).ingestJob;
      expect(job.status).toBe('SUCCEEDED');
      expect(job.outcomes.map((o: { status: string; warnings: string[] }) => [o.status, o.warnings])).toEqual([
        ['CREATED', MARKDOWN_WARNINGS],
        ['CREATED', HTML_WARNINGS],
      ]);
    } finally {
      await jobs.close();
    }
  }, 120_000);
});
