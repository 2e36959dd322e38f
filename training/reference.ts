/**
 * Reference outputs of the project's own code, for training/parity.py (offline; no store needed).
 *
 *   npx tsx training/reference.ts IN.json OUT.json [--role passage|questionPassage] [--folder DIR]
 *
 * IN.json is a JSON array of strings. OUT.json gets, per text:
 *   ids        the project's USE-lite token ids (UseLiteTokenizer, untruncated)
 *   vectors    the project's USE-lite vectors (UseLiteEncoder, 1 thread, the role's budget)
 * and with --folder (a custom model folder: model.onnx + tokenizer.json + dhr-model.json):
 *   folderIds      the folder's token ids through the product's TextTokenizer (@huggingface/tokenizers)
 *   folderVectors  the folder's vectors through the product's TransformerEncoder.load
 *   folderName, folderDimension
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UseLiteEncoder } from '../src/encoders/use-lite/encoder';
import { defaultUseLiteModelDir } from '../src/encoders/use-lite/model';
import { UseLiteTokenizer } from '../src/encoders/use-lite/tokenizer';
import { TransformerEncoder } from '../src/encoders/transformer/encoder';
import { TextTokenizer } from '../src/encoders/transformer/tokenizer';
import type { EncoderRole } from '../src/encoders/types';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string): string | undefined => {
    const i = args.indexOf(name);
    if (i < 0) return undefined;
    const v = args[i + 1];
    args.splice(i, 2);
    return v;
  };
  const role = (flag('--role') ?? 'passage') as EncoderRole;
  const folder = flag('--folder');
  const [input, output] = args;
  if (!input || !output) {
    console.error('usage: npx tsx training/reference.ts IN.json OUT.json [--role passage|questionPassage] [--folder DIR]');
    process.exit(2);
  }
  const texts = JSON.parse(readFileSync(input, 'utf8')) as string[];
  if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) throw new Error(`${input} must hold a JSON array of strings`);

  const tokenizer = UseLiteTokenizer.fromModelDir(defaultUseLiteModelDir());
  const result: Record<string, unknown> = { role, ids: texts.map((t) => tokenizer.encode(t)) };

  const useLite = await UseLiteEncoder.load({ threads: 1, queryThreads: 1 });
  try {
    result.vectors = (await useLite.encode(texts, role)).vectors.map((v) => Array.from(v));
    result.maxTokens = useLite.maxTokens(role);
  } finally {
    await useLite.close();
  }

  if (folder) {
    const text = readFileSync(join(folder, 'tokenizer.json'), 'utf8');
    const tok = TextTokenizer.parse(text, join(folder, 'tokenizer.json'), 'folder');
    result.folderIds = texts.map((t) => tok.encode(t, Number.MAX_SAFE_INTEGER).ids);
    const enc = await TransformerEncoder.load(folder, { threads: 1, queryThreads: 1 });
    try {
      result.folderVectors = (await enc.encode(texts, role)).vectors.map((v) => Array.from(v));
      result.folderName = enc.name;
      result.folderDimension = enc.dimension;
      result.folderMaxTokens = enc.maxTokens(role);
    } finally {
      await enc.close();
    }
  }
  writeFileSync(output, JSON.stringify(result));
  console.error(`reference: ${texts.length} texts (${role}) → ${output}${folder ? ` (+ folder ${folder})` : ''}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
