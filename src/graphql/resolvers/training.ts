import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { badUserInput } from '../../errors';
import { insertFeedback } from '../../store/feedback';
import type { Role } from '../../store/keys';
import { checkFeedback, importFeedback } from '../../training/feedback';
import { minePairs } from '../../training/mine';
import { MAX_TRAINING_PAIRS, type PairKind, type TrainingPair as Pair } from '../../training/pair';
import type { Context } from '../context';
import { checkPageSize, parseNodeId } from '../ids';
import { Feedback, FeedbackImport, FeedbackJudgementInput, PairKindEnum, TrainingPair } from '../types/training';

@Resolver(() => TrainingPair)
export class TrainingResolver {
  @Authorized<Role>('admin')
  @Query(() => [TrainingPair], {
    description: `Training pairs mined from the stored corpus with their negatives (at most ${MAX_TRAINING_PAIRS}), the first lines \`dhr pairs\` writes with the same kinds and seed. Refused when none can be mined, naming why.`,
  })
  async trainingPairs(
    @Ctx() ctx: Context,
    @Arg('kinds', () => [PairKindEnum], { nullable: true, description: 'Default: every kind.' }) kinds?: PairKind[] | null,
    @Arg('first', () => Int, { defaultValue: 10 }) first = 10,
    @Arg('seed', () => Int, { defaultValue: 0, description: 'Drives every random draw (0 or more).' }) seed = 0,
  ): Promise<Pair[]> {
    checkPageSize(first, MAX_TRAINING_PAIRS);
    if (kinds && kinds.length === 0) throw badUserInput('kinds must name at least one kind (or be left out for all)', 'kinds');
    if (seed < 0) throw badUserInput('seed must be 0 or more', 'seed');
    const pairs: Pair[] = [];
    if (first === 0) return pairs;
    for await (const pair of minePairs(ctx.db, { kinds: kinds ?? undefined, limit: first, seed, bm25: ctx.config.bm25, pageSize: first })) {
      pairs.push(pair);
      if (pairs.length >= first) break;
    }
    return pairs;
  }

  @Authorized<Role>('admin')
  @Mutation(() => Feedback, { description: 'Stores a judgement of whether a passage answers a question (a FEEDBACK training pair when relevant).' })
  async recordFeedback(
    @Ctx() ctx: Context,
    @Arg('question', () => String) question: string,
    @Arg('passageId', () => ID) passageId: string,
    @Arg('relevant', () => Boolean) relevant: boolean,
  ): Promise<Feedback> {
    const id = parseNodeId(passageId, 'Passage', 'passageId');
    const [row] = await insertFeedback(ctx.db, [{ question: checkFeedback(question, id), passageId: id, relevant }]);
    return row;
  }

  @Authorized<Role>('admin')
  @Mutation(() => FeedbackImport, {
    description:
      'Stores judgements in one transaction, all or none: one that is invalid or names an unknown passage refuses every one, named by its index (`dhr feedback import`).',
  })
  async importFeedback(@Ctx() ctx: Context, @Arg('judgements', () => [FeedbackJudgementInput]) judgements: FeedbackJudgementInput[]): Promise<FeedbackImport> {
    const at = (i: number) => `judgements[${i}]`;
    const inputs = judgements.map((j, i) => {
      const id = parseNodeId(j.passageId, 'Passage', `${at(i)}.passageId`);
      return { question: checkFeedback(j.question, id, at(i)), passageId: id, relevant: j.relevant };
    });
    return importFeedback(ctx.db, inputs, at);
  }
}
