import type { AdapterLevel } from '../adapters/linear';
import type { EpochRecord } from '../adapters/train';
import type { Config } from '../config';
import { adapt, type AdaptOptions, type LevelReport } from '../pipeline/adapt';
import { openMigratedDatabase } from '../store/open';
import { loadEmbedding } from './embed';
import { answering } from './answering';
import { ProgressBar } from './progress';

export type AdaptCommandOptions = Omit<AdaptOptions, 'onEvent'> & { pairs: string[] };

const fixed = (n: number, digits = 3) => n.toFixed(digits);

function epochLine(level: AdapterLevel, r: EpochRecord): string {
  return `${level} epoch ${r.epoch}: train loss ${fixed(r.trainLoss)}, held-out loss ${fixed(r.heldOut.loss)}, held-out recall@1 ${fixed(r.heldOut.accuracy)}`;
}

export function describeLevel(level: AdapterLevel, r: LevelReport): string {
  const best = r.bestEpoch === 0 ? r.baseline : r.curve[r.bestEpoch - 1].heldOut;
  return (
    `${level}: ${r.pairs.train} training / ${r.pairs.heldOut} held-out pairs (${r.skipped} skipped: positive not stored); ` +
    `held-out recall@1 ${fixed(r.baseline.accuracy)} → ${fixed(best.accuracy)}, loss ${fixed(r.baseline.loss)} → ${fixed(best.loss)} ` +
    `(kept epoch ${r.bestEpoch}${r.bestEpoch === 0 ? ': no epoch beat the identity' : ''}); ${r.seconds.toFixed(1)} s`
  );
}

/** `dhr adapt --pairs FILE…`: trains, registers (and with --activate activates) a query-side adapter. */
export async function adaptCommand(config: Config, options: AdaptCommandOptions): Promise<number> {
  const db = await openMigratedDatabase(config);
  try {
    const { models, targets } = await loadEmbedding(db, config);
    try {
      return await answering('adapt', async () => {
        let bar: ProgressBar | undefined;
        let label = '';
        const { pairs, ...rest } = options;
        const result = await adapt(db, targets, pairs, {
          ...rest,
          onEvent: (e) => {
            if (e.stage === 'read') console.error(`read ${e.pairs} pairs`);
            else if (e.stage === 'vectors') console.error(`${e.level}: ${e.targets} stored vectors read`);
            else if (e.stage === 'epoch') {
              bar?.finish();
              bar = undefined;
              console.error(epochLine(e.level, e.record));
            } else {
              const name = `${e.stage} ${e.level}`;
              if (!bar || label !== name) {
                bar?.finish();
                bar = new ProgressBar(e.total, name);
                label = name;
              }
              bar.update(e.done, '', e.total);
            }
          },
        });
        bar?.finish();
        for (const [level, report] of Object.entries(result.levels)) console.log(describeLevel(level as AdapterLevel, report));
        console.log(
          result.activated
            ? `adapter "${result.adapter.name}" registered and active`
            : `adapter "${result.adapter.name}" registered; activate it with: dhr adapters activate ${result.adapter.name}`,
        );
        return 0;
      });
    } finally {
      await models.close();
    }
  } finally {
    await db.close();
  }
}
