/**
 * Entity–attribute questions on the Python docs: a question names a module (the entity, a
 * document) and asks about one object it documents (the attribute: a function, class, exception
 * or constant), "What does the join function in os.path do?". Gold: the module's document, the
 * section the object is documented in (where it is below the document level), and as answer the
 * object's signature with its arguments, which the passage documenting it holds ("join(path, *paths)"; objects
 * documented without arguments are not asked about: their bare name occurs all over their page). The corpus
 * is the Python-docs set's own (`corpus: 'pydocs'`, so a cached load serves both); the questions
 * are written from the corpus's own object directives, so no labels are needed, and are split
 * by a hash of their id as every set is.
 */
import { createHash } from 'node:crypto';
import type { RstTarget } from '../ingest/rst';
import { debianPackage } from './fetch';
import { readPydocs } from './pydocs';
import type { EvalDataset, EvalQuestion } from './types';

/** One question form per kind of object; the kinds not listed (methods, options, C API…) ask nothing. */
const FORMS: Record<string, (name: string, module: string) => string> = {
  function: (n, m) => `What does the ${n} function in ${m} do?`,
  coroutinefunction: (n, m) => `What does the ${n} coroutine in ${m} do?`,
  decorator: (n, m) => `What does the ${n} decorator in ${m} do?`,
  class: (n, m) => `What is the ${n} class in ${m} for?`,
  exception: (n, m) => `When does ${m} raise ${n}?`,
  data: (n, m) => `What is ${n} in ${m}?`,
};

/** At most this many questions per module, chosen by a hash of the object's name (reproducible). */
export const PER_MODULE = 2;

const hash = (s: string) => createHash('sha256').update(s).digest('hex');

export function buildPyapi(cacheDir: string, root = debianPackage('python3.11-doc', cacheDir)): EvalDataset {
  const { documents, targets } = readPydocs(root);
  const questions: EvalQuestion[] = [];
  let objects = 0;
  let modules = 0;
  for (const d of documents) {
    const all = targets.get(d.key!) ?? [];
    // A module's own page: its `module` directive names the entity the questions ask about.
    const module = all.find((t) => t.kind === 'module')?.name;
    if (!module) continue;
    modules++;
    const asked = all
      .filter(
        (t): t is RstTarget & { object: NonNullable<RstTarget['object']> } => t.kind === 'object' && t.object !== undefined && t.object.directive in FORMS,
      )
      .filter((t) => t.name.startsWith(`${module}.`) && !t.name.slice(module.length + 1).includes('.'))
      // A signature with its arguments, "name(…)", is what the answer's passage holds and few others
      // do; a bare name ("error") occurs all over its page, and a wrapped signature's later lines
      // are not objects at all.
      .filter((t) => t.object.signature.startsWith(`${t.name.slice(module.length + 1)}(`) && t.object.signature.endsWith(')'));
    objects += asked.length;
    for (const t of [...asked].sort((a, b) => hash(a.name).localeCompare(hash(b.name))).slice(0, PER_MODULE)) {
      const name = t.name.slice(module.length + 1);
      questions.push({
        id: `pyapi/${t.name}`,
        question: FORMS[t.object.directive](name, module),
        answers: [t.object.signature],
        goldDocuments: [d.key!],
        goldSections: t.sectionPath.length > 0 ? [{ document: d.key!, path: t.sectionPath }] : [],
        shape: t.object.directive,
      });
    }
  }
  return {
    name: 'pyapi',
    corpus: 'pydocs',
    description: 'Python 3.11 documentation (the pydocs corpus) with entity–attribute questions: a module named, one of its objects asked about',
    documents,
    questions,
    stats: {
      corpusDocuments: documents.length,
      modulePages: modules,
      objectsAskable: objects,
      questions: questions.length,
      questionsWithGoldSection: questions.filter((q) => q.goldSections.length > 0).length,
    },
    notes: [],
  };
}
