/**
 * WAL positions (pg_lsn) and how far a replica's replay is behind its primary, in time. PostgreSQL
 * reports positions as text ("16/B374D848": two 32-bit hex halves); they compare as 64-bit numbers.
 */
export type Lsn = bigint;

export function parseLsn(text: string): Lsn {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!match) throw new Error(`not a WAL position: ${JSON.stringify(text)}`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

export function formatLsn(lsn: Lsn): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/**
 * The primary's WAL position as sampled over time, so a replica's replay position can be turned
 * into a lag in milliseconds: a replica that has not replayed a position the primary had at time t
 * is at least now − t behind. (PostgreSQL's own replay timestamp says when the last replayed
 * transaction committed, which reads as hours of lag on a primary that was merely idle.)
 * Only increases are kept, each with the time it was first seen; samples older than the window
 * are dropped, all but the newest of them, so a replica behind everything kept is known to be
 * more than the window behind.
 */
export class WalHistory {
  private readonly samples: Array<{ at: number; lsn: Lsn }> = [];
  private pruned = false;

  constructor(private readonly windowMs: number) {}

  add(at: number, lsn: Lsn): void {
    const last = this.samples[this.samples.length - 1];
    if (!last || lsn > last.lsn) this.samples.push({ at, lsn });
    const cutoff = at - this.windowMs;
    while (this.samples.length > 1 && this.samples[1].at < cutoff) {
      this.samples.shift();
      this.pruned = true;
    }
  }

  /** The primary's newest known position (undefined before the first sample). */
  latest(): Lsn | undefined {
    return this.samples[this.samples.length - 1]?.lsn;
  }

  /**
   * How long ago the primary had WAL that the replica has not replayed (0: it has replayed all the
   * primary had at the last sample; Infinity: behind the first sample this process took, by an
   * unknown amount).
   */
  lagMs(replayed: Lsn, now: number): number {
    const first = this.samples.findIndex((s) => s.lsn > replayed);
    if (first < 0) return 0;
    if (first === 0 && !this.pruned) return Infinity;
    return Math.max(0, now - this.samples[first].at);
  }
}
