import { Command, InvalidArgumentError, Option } from 'commander';
import { ADAPTER_LEVELS, type AdapterLevel } from '../adapters/linear';
import { TRAIN_DEFAULTS } from '../adapters/train';
import type { Config } from '../config';
import { environmentHelp } from '../config/variables';
import { ADAPT_DEFAULTS } from '../pipeline/adapt';
import { CONTEXT_EXPANSIONS, CONTEXT_LIMITS } from '../pipeline/context/options';
import { ENCODER_ROLES } from '../encoders/types';
import { FILE_EXTENSIONS } from '../ingest/formats';
import { RETRIEVAL_MODES } from '../retrieval/modes';
import { RETRIEVE_DEFAULTS } from '../retrieval/defaults';
import { RANKING_NAMES } from '../retrieval/parameters';
import { PSEUDO_KINDS, QUESTIONS_PER_KIND, type PseudoKind } from '../tuning/pseudo-questions';
import { JOB_SCOPES, JOB_STATUSES } from '../store/jobs';
import { ROLES } from '../store/keys';
import { isPairKind, PAIR_KINDS, type PairKind } from '../training/pair';
import type { AskOptions } from './ask';
import type { EvalCommandOptions } from './eval';
import { refuseWhileServed } from './running-server';
import { asksServedStore, type ServerOptions } from './transport';
import type { IngestOptions } from './ingest-command';
import type { TuneCommandOptions } from './tune-report';

/*
 * Each command's module is loaded only when that command runs (typeof import: types only), so
 * `dhr --help`, and `dhr ask` sent to a running server, load neither PGlite, onnxruntime nor the
 * GraphQL schema: a CLI start in well under a second instead of one that grows with every module.
 */
const adaptCli = () => require('./adapt') as typeof import('./adapt');
const askCli = () => require('./ask') as typeof import('./ask');
const embedCli = () => require('./embed') as typeof import('./embed');
const evalCli = () => require('./eval') as typeof import('./eval');
const ingestCli = () => require('./ingest-command') as typeof import('./ingest-command');
const jobsCli = () => require('./jobs') as typeof import('./jobs');
const mcpCli = () => require('./mcp') as typeof import('./mcp');
const operationsCli = () => require('./operations') as typeof import('./operations');
const pairsCli = () => require('./pairs') as typeof import('./pairs');
const reembedCli = () => require('./reembed') as typeof import('./reembed');
const serveCli = () => require('./serve') as typeof import('./serve');
const storeCli = () => require('./store') as typeof import('./store');
const tuneCli = () => require('./tune') as typeof import('./tune');

/**
 * The `dhr` command line. `dhr <command> --help` opens no database and reads no settings: they
 * are loaded only for an action that runs. An action resolves to the process's exit code.
 */
export type Action = (config: Config) => Promise<number>;

/** `dhr --help`'s environment list: every variable the product reads (src/config/variables.ts). */
const ENVIRONMENT = environmentHelp();

function integer(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
    return n;
  };
}

function decimal(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`must be a number from ${min} to ${max}`);
    return n;
  };
}

function kindList(value: string): PairKind[] {
  const kinds = value.split(',').map((k) => k.trim());
  const wrong = kinds.filter((k) => !isPairKind(k));
  if (wrong.length || kinds.length === 0) throw new InvalidArgumentError(`must be a comma-separated list of ${PAIR_KINDS.join(', ')}`);
  return [...new Set(kinds as PairKind[])];
}

function levelList(value: string): AdapterLevel[] {
  const parts = value.split(',').map((p) => p.trim());
  const unknown = parts.filter((p) => !(ADAPTER_LEVELS as readonly string[]).includes(p));
  if (unknown.length > 0 || parts.length === 0) throw new InvalidArgumentError(`levels are ${ADAPTER_LEVELS.join(', ')}`);
  return parts as AdapterLevel[];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

function idList(value: string): number[] {
  return value.split(',').map((part) => integer(1, 2_147_483_647)(part.trim()));
}

function serverUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be a URL such as http://127.0.0.1:4000/');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('must be an http:// or https:// URL');
  return url.href;
}

/**
 * The --url form of each command that is refused while a server holds the store: what its hint
 * names after `dhr <path>` (cli/running-server.ts), kept with the command's own definition so that
 * adding a --url command is one edit.
 */
const urlForms = new WeakMap<Command, string>();

/** What a refused `command` names after `dhr <path>` with --url (`<id>`, `--mode <mode> <name=value…>`); undefined: none. */
export const urlFormOf = (command: Command): string | undefined => urlForms.get(command);

/**
 * Adds --url and --key: with --url the command talks to that server's GraphQL API, not the
 * database. `form`: the operands its hint names when a server holds the store (required unless
 * the command asks that server instead, cli/transport.ts). `key`: the --key option, where it
 * says more (servedKey).
 */
function remotable(
  command: Command,
  {
    form,
    key = new Option('--key <key>', 'API key for --url (admin for changes); prefer the environment variable').env('DHR_API_KEY'),
  }: { form?: string; key?: Option } = {},
): Command {
  if (form !== undefined) urlForms.set(command, form);
  // Said when the program is built (every dhr run and test), not first by a user refused without a hint.
  else if (!asksServedStore(commandPath(command))) throw new Error(`dhr ${commandPath(command)} takes --url but names no form for its refusal`);
  return command.option('--url <server>', "a running server's URL: act through its GraphQL API instead of opening the database", serverUrl).addOption(key);
}

/** --key of a read-only command, which also asks the server holding the store by itself (cli/running-server.ts). */
const servedKey = () =>
  new Option(
    '--key <key>',
    'API key for --url, or for the server holding the store, which this asks while it runs (if its READ_ACCESS is key); prefer the environment variable',
  ).env('DHR_API_KEY');

/**
 * Commands not refused while a server holds the store: those that ask it (cli/transport.ts) and
 * eval (a store of its own in memory). Every other one is refused at once.
 */
const servedMayRun = (command: string) => asksServedStore(command) || command === 'eval';

/** `keys create`, not `dhr keys create`. */
const commandPath = (command: Command): string => (command.parent?.parent ? `${commandPath(command.parent)} ${command.name()}` : command.name());

function pseudoKinds(value: string): PseudoKind[] {
  const kinds = value.split(',').map((k) => k.trim());
  const bad = kinds.filter((k) => !(PSEUDO_KINDS as readonly string[]).includes(k));
  if (bad.length > 0) throw new InvalidArgumentError(`unknown kind ${bad.join(', ')}; kinds: ${PSEUDO_KINDS.join(', ')}`);
  return kinds as PseudoKind[];
}

/**
 * `run` receives each action; main.ts runs it with the loaded settings. A command that would open
 * the embedded store while a server holds it is refused first, naming the server (running-server.ts).
 */
export function buildProgram(runAction: (action: Action) => Promise<void>): Command {
  let invoked: Command | undefined;
  const run = (action: Action) =>
    runAction(async (config) => {
      const path = invoked ? commandPath(invoked) : '';
      const sent = invoked?.opts<ServerOptions>().url !== undefined;
      return (!sent && !servedMayRun(path) ? refuseWhileServed(config, path, invoked && urlFormOf(invoked)) : undefined) ?? action(config);
    });
  const program = new Command('dhr')
    .description('Dense Hierarchical Retrieval served over GraphQL from PostgreSQL + pgvector')
    .showHelpAfterError('(run "dhr <command> --help" for its options)')
    .addHelpText('after', ENVIRONMENT)
    .hook('preAction', (_, actionCommand) => {
      invoked = actionCommand;
    });

  program
    .command('serve')
    .description('start the GraphQL server (and JOB_WORKERS workers for ingest and re-embedding jobs)')
    .option('--demo', 'load the Factbook corpus into an empty store and print a fresh admin key')
    .option('--port <n>', 'listen on this port (0: any free one); overrides PORT', integer(0, 65535))
    .action((options: { demo?: boolean; port?: number }) =>
      run(async (config) => serveCli().serve({ ...config, port: options.port ?? config.port }, { demo: options.demo === true })),
    );

  program
    .command('migrate')
    .description('apply pending migrations')
    .action(() => run(async (config) => storeCli().migrateCommand(config)));

  remotable(
    program
      .command('ingest')
      .description(`ingest ${FILE_EXTENSIONS.join(', ')} files (formats: docs/ingest.md#ingest-formats), then embed them`)
      .argument('[paths...]', 'files or directories')
      .option('--source <s>', 'source recorded on documents that name none')
      .option('--no-embed', 'write and index only; embed later with `dhr embed` (not with --url: the server decides)')
      .option('--batch-passages <n>', 'passages per transaction of the bulk path (16 documents or more; default 2000)', integer(1, 1_000_000))
      .option('--job <id>', 'with --url, instead of paths: follow this ingest job until it ends (repeatable)', (value: string, previous: number[] = []) => [
        ...previous,
        integer(1, 2 ** 31 - 1)(value),
      ])
      .option(
        '--retry-for <seconds>',
        'with --url: how long to keep asking a server that does not answer (restarting) before giving up (default 60; 0: never)',
        integer(0, 86_400),
      ),
    { form: '<paths…>' },
  ).action((paths: string[], options: IngestOptions) => run(async (config) => ingestCli().ingestCommand(config, paths, options)));

  program
    .command('embed')
    .description('embed every document and passage that lacks a current embedding')
    .action(() => run(async (config) => embedCli().embedCommand(config)));

  // dhr ask: the top answers for a person, or JSON for scripts.
  program
    .command('ask')
    .description('ask a question: the top passages with their title paths, the answer highlighted in its sentence, and the scores')
    .argument('<question>', 'the question (1–2000 characters)')
    .addOption(new Option('--mode <mode>', 'retrieval mode (default: HYBRID_HIERARCHICAL)').choices([...RETRIEVAL_MODES]))
    .option('--k1 <n>', `documents stage 1 keeps (default ${RETRIEVE_DEFAULTS.k1})`, integer(1, 1000))
    .option('--k2 <n>', `passages shown (default 5; with --context, passages the blocks are built from, default ${RETRIEVE_DEFAULTS.k2})`, integer(1, 1000))
    .option('--lambda <x>', "weight of the document score (default: the mode's tuned one)", decimal(0, 10))
    .option('--alpha <x>', "hybrid modes: weight of the dense score (default: the mode's tuned one)", decimal(0, 1))
    .option('--per-document <n>', "at most n passages of one document (default: the server's PER_DOCUMENT, else none)", integer(1, 1000))
    .option(
      '--context <tokens>',
      'print the context blocks a frontend would send its model, within this token budget (Retrieval.context)',
      integer(1, CONTEXT_LIMITS.maxTokens),
    )
    .addOption(
      new Option('--expand <how>', 'with --context: grow each ranked passage into its neighbours or its section (default NONE)').choices([
        ...CONTEXT_EXPANSIONS,
      ]),
    )
    .option(
      '--window <n>',
      `with --context --expand WINDOW: neighbours each side (default ${CONTEXT_LIMITS.defaultWindow})`,
      integer(0, CONTEXT_LIMITS.maxWindow),
    )
    .option('--json', 'print the retrieval as JSON')
    .option('--url <server>', 'ask a running server (its GraphQL URL) instead of the local store', serverUrl)
    .addOption(new Option('--key <key>', 'API key for --url (servers with READ_ACCESS=key); prefer the environment variable').env('DHR_API_KEY'))
    .action((question: string, options: AskOptions) => run(async (config) => askCli().askCommand(config, question, options)));

  program
    .command('mcp')
    .description(
      'serve the Model Context Protocol over stdio, for an agent that starts dhr as its tool server: search, get_document, get_section, get_passage, list_documents (and ingest, job_status with an admin key)',
    )
    .addOption(new Option('--key <key>', 'an API key of this store: an admin key adds the admin tools; prefer the environment variable').env('DHR_API_KEY'))
    .action((options: { key?: string }) => run(async (config) => mcpCli().mcpCommand(config, options)));

  remotable(program.command('stats').description('count documents, sections, passages, links and embeddings per model')).action((options: ServerOptions) =>
    run(async (config) => operationsCli().statsCommand(config, options)),
  );

  program
    .command('rebuild-bm25')
    .description(
      'rebuild every BM25 posting and statistic from the stored rows in one set-based pass (after a bulk SQL load, or to repair); writers wait meanwhile',
    )
    .action(() => run(async (config) => storeCli().rebuildBm25Command(config)));

  const models = program.command('models').description('registered embedding models: list, register, register-external, activate, drop');
  remotable(models.command('list', { isDefault: true }).description('registered models, their coverage and the roles they serve'), { key: servedKey() }).action(
    (options: ServerOptions) => run(async (config) => operationsCli().listModelsCommand(config, options)),
  );
  models
    .command('register')
    .description('register a model (loaded and probed first)')
    .argument('<folder>', "a model folder (model.onnx, tokenizer.json, dhr-model.json) or 'use-lite'")
    .action((target: string) => run(async (config) => jobsCli().registerModelCommand(config, target)));
  remotable(
    models
      .command('register-external')
      .description(
        'register an external model: vectors supplied by the client (ingest JSON vector / passages[].vector, retrieve questionVector), no encoder files',
      )
      .argument('<name>', 'model name')
      .requiredOption('--dimension <n>', 'numbers per vector (1-2000)', (v: string) => Number(v)),
    { form: '<name> --dimension <n>' },
  ).action((target: string, options: { dimension: number } & ServerOptions) =>
    run(async (config) => operationsCli().registerExternalModelCommand(config, target, options.dimension, options)),
  );
  remotable(
    models
      .command('activate')
      .description('switch retrieval to a model (refused until its embeddings are complete)')
      .argument('<name>', 'model name')
      .option('--roles <roles>', `comma-separated: ${ENCODER_ROLES.join(',')} (default: all)`),
    { form: '<name> [--roles <roles>]' },
  ).action((target: string, options: { roles?: string } & ServerOptions) =>
    run(async (config) => operationsCli().activateModelCommand(config, target, options)),
  );
  remotable(models.command('drop').description('delete a model that serves no role, with its embeddings').argument('<name>', 'model name'), {
    form: '<name>',
  }).action((target: string, options: ServerOptions) => run(async (config) => operationsCli().dropModelCommand(config, target, options)));

  program
    .command('adapt')
    .description('train a query-side adapter on training pairs (dhr pairs) over the stored vectors of the active models, and register it')
    .requiredOption('--pairs <file>', 'a pairs JSONL file (repeat for more)', collect)
    .option('--name <name>', "the adapter's name (default: adapter-<date>)")
    .option('--levels <levels>', `comma-separated: ${ADAPTER_LEVELS.join(',')}`, levelList, [...ADAPTER_LEVELS])
    .option('--epochs <n>', 'at most this many passes', integer(1, 1000), TRAIN_DEFAULTS.epochs)
    .option('--lr <x>', "Adam's step size", decimal(1e-7, 1), TRAIN_DEFAULTS.lr)
    .option('--temperature <x>', 'softmax temperature of the contrastive loss', decimal(1e-4, 10), TRAIN_DEFAULTS.temperature)
    .option('--l2 <x>', 'weight of the pull toward the identity map', decimal(0, 100), TRAIN_DEFAULTS.l2)
    .option('--batch-size <n>', 'pairs per mini-batch (in-batch negatives)', integer(2, 4096), TRAIN_DEFAULTS.batchSize)
    .option('--negatives <n>', 'hard negatives kept per pair and level', integer(0, 100), ADAPT_DEFAULTS.negativesPerPair)
    .option('--holdout <x>', 'fraction of pairs held out for early stopping and metrics', decimal(0.01, 0.9), TRAIN_DEFAULTS.holdout)
    .option('--patience <n>', 'epochs without a better held-out loss before stopping', integer(1, 100), TRAIN_DEFAULTS.patience)
    .option('--seed <n>', 'seed of the split and shuffles', integer(0, 2_147_483_647), TRAIN_DEFAULTS.seed)
    .option(
      '--rank <n>',
      'r: W = diagonal + rank r (faster, fewer parameters); 0: the full d×d W (use a smaller --lr, e.g. 0.0001 at 512-d)',
      integer(0, 2000),
      TRAIN_DEFAULTS.rank,
    )
    .option('--activate', 'activate it in the same transaction as its registration')
    .action(
      (o: {
        pairs: string[];
        name?: string;
        levels: AdapterLevel[];
        epochs: number;
        lr: number;
        temperature: number;
        l2: number;
        batchSize: number;
        negatives: number;
        holdout: number;
        patience: number;
        seed: number;
        rank: number;
        activate?: boolean;
      }) =>
        run(async (config) =>
          adaptCli().adaptCommand(config, {
            pairs: o.pairs,
            name: o.name ?? `adapter-${new Date().toISOString().replace(/[:.]/g, '-')}`,
            levels: o.levels,
            epochs: o.epochs,
            lr: o.lr,
            temperature: o.temperature,
            l2: o.l2,
            batchSize: o.batchSize,
            negativesPerPair: o.negatives,
            holdout: o.holdout,
            patience: o.patience,
            seed: o.seed,
            rank: o.rank,
            activate: o.activate === true,
          }),
        ),
    );

  const adapters = program.command('adapters').description('query-side adapters: list, activate (or none), drop');
  remotable(adapters.command('list', { isDefault: true }).description('registered adapters, their base models and training records, as JSON'), {
    key: servedKey(),
  }).action((options: ServerOptions) => run(async (config) => operationsCli().listAdaptersCommand(config, options)));
  remotable(
    adapters
      .command('activate')
      .description('apply an adapter to question vectors from now on (refused unless it fits the active models); none: stop')
      .argument('<name>', "adapter name, or 'none'"),
    { form: '<name|none>' },
  ).action((name: string, options: ServerOptions) => run(async (config) => operationsCli().activateAdapterCommand(config, name, options)));
  remotable(
    adapters
      .command('drop')
      .description('delete a registered adapter (refused for the active one: activate another or none first)')
      .argument('<name>', 'adapter name'),
    { form: '<name>' },
  ).action((name: string, options: ServerOptions) => run(async (config) => operationsCli().dropAdapterCommand(config, name, options)));

  remotable(
    program
      .command('reembed')
      .description(
        "queue a re-embedding job (or attach to the model's open one, or to --job), work on it here and show its progress until it ends; with --url the server's workers work it",
      )
      .option('--model <name>', 'the model to write embeddings for')
      .addOption(new Option('--scope <scope>', 'what to embed').choices([...JOB_SCOPES, ...JOB_SCOPES.map((s) => s.toLowerCase())]).default('ALL'))
      .option('--documents <ids>', 'comma-separated document ids (scope DOCUMENTS)', idList)
      .option('--job <id>', 'attach to this job instead', integer(1, 2_147_483_647))
      .option('--no-work', 'only queue (or attach) and follow; leave the work to workers (always so with --url)')
      .option('--trace <file>', 'append the ids of each encoded batch to this file (crash tests; not with --url)'),
    { form: '--model <name>' },
  ).action((options: { model?: string; scope: string; documents?: number[]; job?: number; work: boolean; trace?: string } & ServerOptions) =>
    run(async (config) => reembedCli().reembedCommand(config, options)),
  );

  program
    .command('worker')
    .description('work ingest and re-embedding jobs (the server also runs JOB_WORKERS of its own) until SIGINT/SIGTERM')
    .option('--concurrency <n>', 'workers in this process', integer(1, 64), 1)
    .option('--exit-when-idle', 'exit once no job is queued or running')
    .option('--trace <file>', 'append the ids of each encoded batch to this file (crash tests)')
    .action((options: { concurrency: number; exitWhenIdle?: boolean; trace?: string }) => run(async (config) => jobsCli().workerCommand(config, options)));

  const jobs = program.command('jobs').description('re-embedding jobs, or with --ingest ingest jobs: list, cancel');
  remotable(
    jobs
      .command('list', { isDefault: true })
      .description('jobs, newest first, as JSON')
      .addOption(new Option('--status <status>', 'only jobs in this state').choices(JOB_STATUSES))
      .option('--ingest', 'ingest jobs (a large ingestDocuments, startIngest, dhr ingest --url) instead of re-embedding jobs'),
    { key: servedKey() },
  ).action((options: { status?: (typeof JOB_STATUSES)[number]; ingest?: boolean } & ServerOptions) =>
    run(async (config) => operationsCli().listJobsCommand(config, options)),
  );
  remotable(
    jobs
      .command('cancel')
      .description('stop a queued or running job')
      .argument('<id>', 'job id', integer(1, 2_147_483_647))
      .option('--ingest', 'an ingest job'),
    { form: '[--ingest] <id>' },
  ).action((id: number, options: { ingest?: boolean } & ServerOptions) => run(async (config) => operationsCli().cancelJobCommand(config, id, options)));

  const keys = program.command('keys').description('API keys: create, list, revoke');
  remotable(
    keys
      .command('create')
      .description('create an API key; prints the key (once) and nothing else on stdout')
      .requiredOption('--role <role>', `one of ${ROLES.join(', ')}`)
      .option('--name <name>', 'a label (default: the role)'),
    { form: '--role <role>' },
  ).action((options: { role: string; name?: string } & ServerOptions) => run(async (config) => operationsCli().createKeyCommand(config, options)));
  remotable(keys.command('list').description('id, prefix, name, role, created, last used, revoked (never the key)')).action((options: ServerOptions) =>
    run(async (config) => operationsCli().listKeysCommand(config, options)),
  );
  remotable(keys.command('revoke').description('revoke a key at once').argument('<id|prefix>', "the key's id, or the start of its prefix"), {
    form: '<id|prefix>',
  }).action((key: string, options: ServerOptions) => run(async (config) => operationsCli().revokeKeyCommand(config, key, options)));

  const settings = program
    .command('settings')
    .description("the corpus's retrieval settings: what a question leaves out, per mode, above the environment and the modes' defaults");
  remotable(
    settings
      .command('show', { isDefault: true })
      .description("every mode's ranking parameters in force and where each comes from (corpus, environment, mode), as JSON"),
    { key: servedKey() },
  ).action((options: ServerOptions) => run(async (config) => operationsCli().showSettingsCommand(config, options)));
  remotable(
    settings
      .command('set')
      .description("set some of a mode's parameters (a new version; the others stay): dhr settings set --mode HYBRID_HIERARCHICAL lambda=0.3 perDocument=1")
      .addOption(new Option('--mode <mode>', 'the mode they apply to').choices(RETRIEVAL_MODES).makeOptionMandatory())
      .argument(
        '[name=value...]',
        `parameters: ${RANKING_NAMES.join(', ')} (perDocument=null: no bound; passageBudget=null: every passage of the k1 documents)`,
      )
      .option('--unset <name...>', "parameters to remove from the mode's settings")
      .option('--note <text>', 'why (kept with the version)'),
    { form: '--mode <mode> <name=value…>' },
  ).action((values: string[], options: { mode: string; unset?: string[]; note?: string } & ServerOptions) =>
    run(async (config) => operationsCli().setSettingsCommand(config, { mode: options.mode, values, unset: options.unset ?? [], note: options.note }, options)),
  );
  remotable(settings.command('rollback').description('restore the settings in force before the current version (a new version)'), { form: '' }).action(
    (options: ServerOptions) => run(async (config) => operationsCli().rollbackSettingsCommand(config, options)),
  );
  remotable(
    settings
      .command('history')
      .description('the stored versions, newest first, each as it was set, as JSON')
      .option('--limit <n>', 'at most this many', integer(1, 1000), 20),
    { key: servedKey() },
  ).action((options: { limit: number } & ServerOptions) => run(async (config) => operationsCli().settingsHistoryCommand(config, options.limit, options)));

  remotable(
    program
      .command('tune')
      .description(
        "choose the corpus's ranking parameters from questions it asks of itself (no labels): prints the grid and the choice; --apply stores it; with --url the server runs it",
      )
      .addOption(new Option('--mode <mode>', 'the mode to tune').choices(RETRIEVAL_MODES).default('HYBRID_HIERARCHICAL'))
      .option('--per-kind <n>', 'pseudo-questions of each kind', integer(QUESTIONS_PER_KIND.min, QUESTIONS_PER_KIND.max), QUESTIONS_PER_KIND.default)
      .option('--kinds <kinds>', `comma-separated: ${PSEUDO_KINDS.join(', ')} (default: all; not with --url)`, (v: string) => pseudoKinds(v))
      .option('--seed <n>', 'drives every draw: the same seed and store give the same questions', integer(0, 2_147_483_647), 0)
      .option('--questions <file>', 'labelled questions too: JSONL of {"question", "passageIds" or "documentKeys"} (not with --url)')
      .option('--apply', 'store the choice as a new settings version when it beats the settings in force'),
    { form: '[--apply]' },
  ).action((options: TuneCommandOptions & ServerOptions) => run(async (config) => tuneCli().tuneCommand(config, options)));

  // Training data from the stored corpus: docs/training.md.
  remotable(
    program
      .command('pairs')
      .description(
        "mine training pairs (HLP link pairs, title-tree pairs, feedback) with BM25, In-Doc, In-Sec and document negatives, as JSONL; with --url the server's trainingPairs (at most 100 of each kind)",
      )
      .option('--out <file>', 'where the JSONL goes ("-" or left out: stdout); written under a temporary name until complete')
      .option('--kinds <list>', `comma-separated kinds (default: all): ${PAIR_KINDS.join(',')}`, kindList)
      .option('--limit <n>', 'the most pairs of each kind (default: all)', integer(1, 2_147_483_647))
      .option('--negatives <n>', 'negatives of each kind per pair: BM25, In-Doc, In-Sec, documents', integer(0, 100), 4)
      .option('--seed <s>', 'seed of every random draw: the same seed and store give the same bytes', integer(0, 4_294_967_295), 0)
      .option('--max-question-words <n>', 'link pairs: passage A clipped to this many words as the question', integer(1, 1000), 64)
      .option('--min-pairs <n>', 'fewer pairs than this is an error (nothing is written)', integer(0, 2_147_483_647), 10),
    { form: '[--out <file>]' },
  ).action(
    (
      options: {
        out?: string;
        kinds?: PairKind[];
        limit?: number;
        negatives: number;
        seed: number;
        maxQuestionWords: number;
        minPairs: number;
      } & ServerOptions,
    ) =>
      run(async (config) => {
        const mine = {
          out: options.out,
          kinds: options.kinds,
          limit: options.limit,
          negatives: { bm25: options.negatives, inDoc: options.negatives, inSec: options.negatives, documents: options.negatives },
          seed: options.seed,
          maxQuestionWords: options.maxQuestionWords,
          minPairs: options.minPairs,
        };
        return pairsCli().pairsCommand(config, { ...mine, url: options.url, key: options.key });
      }),
  );

  const feedback = program.command('feedback').description('judged (question, passage) pairs for training');
  remotable(
    feedback
      .command('import')
      .description(
        'import judgements from JSONL lines {"question": …, "passageId": …, "relevant": true|false}: all lines or none (every line and the passage it names are checked before any is stored; with --url sent 500 a request)',
      )
      .argument('<file>', 'the JSONL file'),
    { form: '<file>' },
  ).action((file: string, options: ServerOptions) => run(async (config) => pairsCli().feedbackImportCommand(config, file, options)));

  program
    .command('eval')
    .description(
      'build a data set, load it into a fresh in-memory PGlite (DATABASE_URL is not used), run every retrieval mode and the dev sweeps (λ, alpha, BM25), write the report',
    )
    .addOption(
      new Option('--dataset <name>', 'the data set').choices(['pydocs', 'pyapi', 'factbook', 'factbook-attributes', 'prose-highlights']).makeOptionMandatory(),
    )
    .option('--out <dir>', 'where the report goes (default .cache/eval; docs/eval with --update-docs)')
    .option('--update-docs', 'refresh the committed report in docs/eval')
    .option(
      '--reuse-corpus',
      'keep the loaded, embedded corpus in .cache/eval-corpus and reuse it on the next run with the same data, model and settings (for tuning runs)',
    )
    .option('--cache <dir>', 'where downloaded data sets are kept (default .cache/datasets)')
    .option('--k1-sweep <list>', 'k1 values to sweep, comma-separated, each 1–1000', '10,50,100,300')
    .option(
      '--reuse-sweeps <report.json>',
      'reuse the dev sweeps of an earlier report on the same corpus (only the test split runs again; refused if corpus, model or settings differ)',
    )
    .option(
      '--skip-sweep <text>',
      'do not run (or report) the dev sweeps whose name contains this text (repeatable)',
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option('--self-tune', "also let dhr tune choose the default mode's settings on the corpus alone (no labels) and score them on the test split")
    .option('--adapters', 'also train query-side adapters (mined pairs, dev-split labels, both) and score them on the test split (minutes more per set)')
    .option(
      '--question-encoder <folder>',
      'also score a fine-tuned question encoder (a custom-model folder, e.g. from training/) on the test split; passages keep their stored vectors',
    )
    .option('--question-roles <roles>', 'the question roles that folder serves: questionPassage, questionDocument (comma-separated)', 'questionPassage')
    .option(
      '--points <json>',
      'only score this point (a JSON object of ranking parameters, and mode, k1, k2) on --split, no sweeps (repeatable: a row each)',
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option(
      '--tune-gap',
      'run dhr tune on the corpus (no labels), then score BM25, the defaults, the tuned point and every point the tune tried on --split: how far the tune is from the best labelled point',
    )
    .addOption(new Option('--split <split>', 'the split --points and --tune-gap are scored on').choices(['dev', 'test']).default('test'))
    .action((options: EvalCommandOptions) => run(async (config) => evalCli().evalCommand(config, options)));

  return program;
}
