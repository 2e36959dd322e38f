/// <reference lib="dom" />
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import puppeteer, { type Browser, type ElementHandle, type Page } from 'puppeteer-core';
import { DEMO_PASSAGE_BUDGET, loadDemoCorpus } from '../../src/cli/demo';
import { loadConfig } from '../../src/config';
import { EncoderSet } from '../../src/encoders/set';
import { embedPending } from '../../src/pipeline/embed';
import { ModelRegistry } from '../../src/pipeline/jobs/registry';
import { startServer } from '../../src/server';
import { createApiKey } from '../../src/store/keys';
import { createTestDatabase, type TestDatabase } from '../helpers/database';

/**
 * The console in a real browser (headless Chromium from scripts/install-chromium.sh, or
 * CHROMIUM_PATH): the demo loader restricted to its first three Factbook countries, embedded with
 * the default encoder, served by the real server. Every request the page makes is recorded: none
 * may leave the server, and the page may log no error.
 */

const REPO = resolve(__dirname, '../..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? join(REPO, '.cache/chromium/usr/lib/chromium/chromium');
const SHOTS = join(REPO, '.cache/screenshots');
// The unpacked package's libraries (ROOT/usr/lib/chromium/chromium → ROOT).
const LIBS = ((root) => [join(root, 'usr/lib/x86_64-linux-gnu'), join(root, 'usr/lib/x86_64-linux-gnu/pulseaudio')])(
  dirname(dirname(dirname(dirname(CHROMIUM)))),
);

if (!existsSync(CHROMIUM)) {
  throw new Error(`no Chromium at ${CHROMIUM}: run scripts/install-chromium.sh (or set CHROMIUM_PATH)`);
}

let t: TestDatabase;
let encoders: EncoderSet;
let models: ModelRegistry;
let stop: () => Promise<void>;
let url: string;
let origin: string;
let adminKey: string;
let browser: Browser;
const requests: string[] = [];
const errors: string[] = [];

async function newPage(width = 1100, height = 800): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewport({ width, height });
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`${page.url()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${(e as Error).message}`));
  page.on('requestfailed', (r) => errors.push(`${r.url()}: ${r.failure()?.errorText}`));
  return page;
}

/** The selector of the result for Algeria › Government › Capital (among the top k2, not necessarily first). */
async function capitalResult(page: Page): Promise<string> {
  const i = await page.$$eval('li.scored .title-path', (links) => links.findIndex((a) => a.textContent === 'Algeria › Government › Capital'));
  expect(i).toBeGreaterThanOrEqual(0);
  return `li.scored:nth-child(${i + 1})`;
}

const textOf = (page: Page, selector: string) => page.$eval(selector, (e) => (e as HTMLElement).innerText);

beforeAll(async () => {
  t = await createTestDatabase();
  const config = loadConfig({ PORT: '0' });
  expect(await loadDemoCorpus(t.db, config.ingest, 3)).toBe(3);
  encoders = await EncoderSet.load();
  models = await ModelRegistry.of(t.db, encoders);
  await embedPending(t.db, (await models.current())!);
  adminKey = (await createApiKey(t.db, { role: 'admin', name: 'browser test' })).key;
  ({ url, stop } = await startServer(t.db, config, models));
  origin = new URL(url).origin;
  mkdirSync(SHOTS, { recursive: true });
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    env: { ...process.env, LD_LIBRARY_PATH: [...LIBS, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') },
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await stop?.();
  await models?.close();
  await encoders?.close();
  await t?.drop();
});

describe('the console', () => {
  it('answers a question from the demo corpus, with the answer highlighted and the score parts drawn', async () => {
    const page = await newPage();
    await page.goto(url, { waitUntil: 'networkidle0' });
    await page.type('input[name=q]', 'What is the capital of Algeria?');
    await page.keyboard.press('Enter');
    await page.waitForSelector('li.scored');
    expect(page.url()).toContain('#/search?q=What+is+the+capital+of+Algeria%3F');
    expect(await textOf(page, 'li.scored .title-path')).toMatch(/^Algeria › /);
    const capital = await capitalResult(page);
    expect(await textOf(page, `${capital} mark.answer-sentence`)).toContain('Algiers');
    expect(await textOf(page, `${capital} .answer strong`)).toBe('Algiers');
    expect(await page.$$eval(`${capital} .bar`, (bars) => bars.length)).toBeGreaterThanOrEqual(4);
    expect(await textOf(page, '.coverage')).toMatch(/passages \d+\/\d+ embedded/);
    // Where each ranking parameter came from: the question gives none, so the mode's defaults, and
    // the demo corpus's own setting (its stage-2 passage budget, stored by the demo loader).
    expect(await textOf(page, '.parameters')).toMatch(/lambda [\d.]+ \(mode\) · alpha [\d.]+ \(mode\)/);
    expect(await textOf(page, '.parameters')).toContain(`passageBudget ${DEMO_PASSAGE_BUDGET} (corpus)`);
    expect(await textOf(page, '.parameters')).toMatch(/perDocumentDecay 0\.01 \(mode\)/);
    await page.screenshot({ path: join(SHOTS, 'search.png') });
    // The README's picture (docs/console.png), refreshed on request only so a test run leaves the checkout clean.
    if (process.env.UPDATE_README_SCREENSHOT === '1') {
      await page.setViewport({ width: 900, height: 640 });
      await page.screenshot({ path: join(REPO, 'docs/console.png') });
    }
    // A decay typed in the form is the question's own, and the URL carries it.
    await page.type('input[name=perDocumentDecay]', '0.2');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => /perDocumentDecay 0\.2 \(request\)/.test(document.querySelector('.parameters')?.textContent ?? ''));
    expect(page.url()).toContain('perDocumentDecay=0.2');
    await page.close();
  });

  it('shows the context blocks a frontend would send, within the budget typed in the form', async () => {
    const page = await newPage();
    await page.goto(`${url}#/search?q=${encodeURIComponent('What is the capital of Algeria?')}`, { waitUntil: 'networkidle0' });
    expect(await page.$('.context')).toBeNull();
    await page.type('input[name=context]', '300');
    await page.select('select[name=expand]', 'WINDOW');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.context-blocks li');
    expect(page.url()).toMatch(/context=300&expand=WINDOW|expand=WINDOW.*context=300/);
    const summary = await textOf(page, '.context .summary');
    const [, used] = /(\d+) of 300 tokens \(use-lite\)/.exec(summary)!;
    expect(Number(used)).toBeLessThanOrEqual(300);
    const blocks = await page.$$eval('.context-blocks li', (items) =>
      items.map((li) => ({ title: li.querySelector('.title-path')?.textContent ?? '', text: li.querySelector('pre')?.textContent ?? '' })),
    );
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocks.some((b) => b.title.startsWith('Algeria › Government › Capital') && b.text.includes('Algiers'))).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'context.png') });
    await page.close();
  });

  it('opens a result as its document, and the tree and previous/next navigate', async () => {
    const page = await newPage();
    await page.goto(`${url}#/search?q=${encodeURIComponent('What is the capital of Algeria?')}`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('li.scored .title-path');
    await page.click(`${await capitalResult(page)} .title-path`);
    await page.waitForSelector('.passage-view');
    expect(await textOf(page, 'article.document h2')).toContain('Algeria');
    expect(await textOf(page, '.passage-view .passage-text')).toContain('Algiers');
    // The passage's section is the tree's current item, inside an open Government branch.
    expect(await textOf(page, '.toc a[aria-current=page]')).toBe('Capital');
    expect(await textOf(page, '.section-title')).toBe('Algeria › Government › Capital');

    // By keyboard: focus the tree's "Geography" entry and follow it.
    await page.$eval('.toc a', (a) => (a as HTMLElement).focus());
    const first = await page.evaluate(() => document.activeElement?.textContent);
    await page.keyboard.press('Enter');
    await page.waitForFunction((title) => document.querySelector('.section-title')?.textContent?.endsWith(title as string), {}, first);
    // Global ids (base64url) in the URL: opaque, as the API gives them.
    expect(page.url()).toMatch(/#\/document\/[\w-]+\?section=[\w-]+/);

    // Next section, then the next passage from a passage.
    const before = await textOf(page, '.section-title');
    await page.click('.section-title ~ .pager a:last-child');
    await page.waitForFunction((b) => document.querySelector('.section-title')?.textContent !== b, {}, before);
    await page.click('.section-passages a');
    await page.waitForSelector('.passage-view a[rel=next]');
    const passage = await textOf(page, '.passage-view .passage-text');
    await page.click('.passage-view a[rel=next]');
    await page.waitForFunction((p) => document.querySelector('.passage-view .passage-text')?.textContent !== p, {}, passage);
    await page.screenshot({ path: join(SHOTS, 'document.png') });

    // A shared link opens the same view.
    const shared = page.url();
    const other = await newPage();
    await other.goto(shared, { waitUntil: 'networkidle0' });
    await other.waitForSelector('.passage-view');
    expect(await textOf(other, '.passage-view .passage-text')).toBe(await textOf(page, '.passage-view .passage-text'));
    await other.close();
    await page.close();
  });

  it('ingests pasted Markdown with the admin key, and the new document is searchable', async () => {
    const page = await newPage();
    await page.goto(`${url}#/admin`, { waitUntil: 'networkidle0' });
    await page.type('input[name=key]', adminKey);
    await page.click('form.key button[type=submit]');
    await page.waitForSelector('textarea[name=markdown]');
    await page.type('textarea[name=markdown]', '# Pemba Spice Notes\n\n## Harvest\n\nThe clove harvest on Pemba island peaks in October.');
    await page.click('form.ingest button[type=submit]');
    await page.waitForSelector('.outcome');
    expect(await textOf(page, '.outcome')).toMatch(/^CREATED Pemba Spice Notes|^CREATED document \d+/);
    // The models table lists the default model, serving every role.
    await page.waitForSelector('table.models tbody tr');
    expect(await textOf(page, 'table.models tbody tr')).toContain('use-lite');
    // The key is kept for the session: a reload still shows the admin tools.
    await page.reload({ waitUntil: 'networkidle0' });
    await page.waitForSelector('textarea[name=markdown]');

    // A file in any ingest format: the upload reads the server's table of formats (ingestFormats).
    await page.waitForFunction(() => (document.querySelector('input[name=files]') as HTMLInputElement | null)?.accept.includes('.html'));
    expect(await page.$eval('input[name=files]', (e) => (e as HTMLInputElement).accept.split(','))).toEqual(
      expect.arrayContaining(['.md', '.html', '.rst', '.jsonl']),
    );
    const html = join(mkdtempSync(join(tmpdir(), 'dhr-upload-')), 'zanzibar.html');
    writeFileSync(
      html,
      '<html><head><title>Zanzibar Ferry Guide</title></head><body><nav>Home</nav><h1>Zanzibar Ferry Guide</h1><h2>Crossings</h2><p>The fast ferry from Dar es Salaam to Stone Town takes two hours.</p></body></html>',
    );
    const input = (await page.$('input[name=files]')) as ElementHandle<HTMLInputElement>;
    await input.uploadFile(html);
    await page.click('form.ingest button[type=submit]');
    await page.waitForFunction(() => Array.from(document.querySelectorAll('.outcome')).some((e) => e.textContent?.includes('zanzibar.html')));
    expect(await page.$$eval('.outcome', (es) => es.map((e) => e.textContent ?? ''))).toEqual([expect.stringMatching(/^CREATED zanzibar\.html · 1 passages/)]);
    const stored = await t.db.query<{ title: string; sections: string[] }>(
      `SELECT d.title, array_agg(s.title) AS sections FROM documents d JOIN sections s ON s.document_id = d.id WHERE d.key = 'zanzibar.html' GROUP BY d.id`,
    );
    expect(stored).toEqual([{ title: 'Zanzibar Ferry Guide', sections: ['Crossings'] }]);

    await page.goto(`${url}#/search?q=${encodeURIComponent('When does the clove harvest peak?')}`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('li.scored .title-path');
    expect(await textOf(page, 'li.scored .title-path')).toBe('Pemba Spice Notes › Harvest');
    expect(await textOf(page, 'li.scored mark.answer-sentence')).toContain('October');
    await page.close();
  });

  it('follows an upload too large to answer at once (an ingest job) until it ends', async () => {
    const page = await newPage();
    await page.goto(`${url}#/admin`, { waitUntil: 'networkidle0' });
    await page.type('input[name=key]', adminKey);
    await page.click('form.key button[type=submit]');
    await page.waitForFunction(() => (document.querySelector('input[name=files]') as HTMLInputElement | null)?.accept.includes('.jsonl'));
    // 70 documents: over INGEST_JOB_DOCUMENTS (64), so ingestDocuments answers with a job.
    const file = join(mkdtempSync(join(tmpdir(), 'dhr-upload-')), 'lighthouses.jsonl');
    writeFileSync(
      file,
      Array.from({ length: 70 }, (_, i) =>
        JSON.stringify({ key: `lighthouse-${i}`, title: `Lighthouse ${i}`, text: `Lighthouse ${i} stands on cape ${i}.` }),
      ).join('\n'),
    );
    const input = (await page.$('input[name=files]')) as ElementHandle<HTMLInputElement>;
    await input.uploadFile(file);
    await page.click('form.ingest button[type=submit]');
    await page.waitForFunction(() => /Ingest job \d+ succeeded: 70\/70 documents/.test(document.body.innerText), { timeout: 120_000 });
    await page.waitForFunction(() => document.querySelectorAll('.outcome').length === 70);
    expect(await page.$$eval('.outcome', (es) => es.every((e) => e.textContent?.startsWith('CREATED lighthouse-')))).toBe(true);
    expect((await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM documents WHERE key LIKE 'lighthouse-%'`))[0].n).toBe(70);
    await page.close();
  }, 180_000);

  it('fits a phone-width screen', async () => {
    const page = await newPage(375, 740);
    await page.goto(`${url}#/search?q=${encodeURIComponent('What is the capital of Angola?')}`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('li.scored');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.screenshot({ path: join(SHOTS, 'phone.png') });
    await page.close();
  });

  it('serves GraphiQL with the schema docs, from the server alone', async () => {
    const page = await newPage();
    await page.goto(`${url}graphiql`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('.graphiql-container');
    // It fills the window (it took a third of its height when its container had none).
    const [height, windowHeight] = await page.evaluate(() => [
      document.querySelector('.graphiql-container')!.getBoundingClientRect().height,
      window.innerHeight,
    ]);
    expect(height).toBe(windowHeight);
    // Run the default query (Ctrl-Enter runs it) and see the answer.
    await page.click('.graphiql-execute-button');
    await page.waitForFunction(() => document.querySelector('.result-window')?.textContent?.includes('"retrieve"'));
    await page.screenshot({ path: join(SHOTS, 'graphiql.png') });

    // The docs: the explorer shows retrieve with the description and arguments the server's schema
    // gives (asked here by introspection, not copied from the schema's source).
    const introspection = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __type(name: "Query") { fields { name description args { name } } } }' }),
    });
    const fields: { name: string; description: string; args: { name: string }[] }[] = ((await introspection.json()) as any).data.__type.fields;
    const retrieve = fields.find((f) => f.name === 'retrieve')!;
    expect(retrieve.description.length).toBeGreaterThan(0);
    await page.click('button[aria-label="Show Documentation Explorer"]');
    const clickLink = async (selector: string, text: string) => {
      await page.waitForFunction((s, t) => Array.from(document.querySelectorAll(s)).some((a) => a.textContent === t), {}, selector, text);
      await page.$$eval(selector, (links, t) => (links.find((a) => a.textContent === t) as HTMLElement).click(), text);
    };
    await clickLink('.graphiql-doc-explorer a.graphiql-doc-explorer-type-name', 'Query');
    await clickLink('.graphiql-doc-explorer a.graphiql-doc-explorer-field-name', 'retrieve');
    await page.waitForFunction(() => document.querySelector('.graphiql-doc-explorer-title')?.textContent === 'retrieve');
    const docs = await textOf(page, '.graphiql-doc-explorer');
    expect(docs).toContain(retrieve.description);
    for (const arg of retrieve.args) expect(docs).toContain(arg.name);
    await page.screenshot({ path: join(SHOTS, 'graphiql-docs.png') });
    await page.close();
  });

  it('made no request outside the server and logged no error', () => {
    expect(requests.length).toBeGreaterThan(10);
    expect(requests.filter((r) => !r.startsWith(`${origin}/`) && !r.startsWith('data:'))).toEqual([]);
    expect(errors).toEqual([]);
  });
});
