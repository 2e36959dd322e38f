/**
 * A one-line progress bar on stderr with rate and ETA; plain periodic lines when stderr is not a
 * terminal (CI logs, a server's log). Every CLI command's bars draw through it.
 */
export class ProgressBar {
  private done = 0;
  private readonly started = Date.now();
  private lastDraw = 0;

  constructor(
    private total: number,
    private readonly label: string,
    private readonly stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
  ) {}

  tick(extra = ''): void {
    this.update(this.done + 1, extra);
  }

  /** `total` may grow (a job plans more work as documents arrive). */
  update(done: number, extra = '', total = this.total): void {
    this.done = done;
    this.total = total;
    const now = Date.now();
    const interval = this.stream.isTTY ? 100 : 5000;
    if (now - this.lastDraw >= interval || this.done === this.total) {
      this.lastDraw = now;
      this.draw(extra);
    }
  }

  /** The line as drawn now: label, bar, done/total, rate, ETA, extra, elapsed. */
  line(extra = ''): string {
    const width = 30;
    const fraction = this.total > 0 ? Math.min(this.done / this.total, 1) : 1;
    const filled = Math.round(fraction * width);
    const seconds = (Date.now() - this.started) / 1000;
    const rate = seconds > 0 ? this.done / seconds : 0;
    const left = this.total - this.done;
    const eta = left <= 0 ? '' : rate > 0 ? ` ETA ${duration(left / rate)}` : ' ETA ?';
    const perSecond = rate >= 10 ? rate.toFixed(0) : rate.toFixed(1);
    const tail = extra ? ` ${extra}` : '';
    return `${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.done}/${this.total} ${perSecond}/s${eta}${tail} ${seconds.toFixed(1)}s`;
  }

  private draw(extra: string): void {
    const line = this.line(extra);
    if (this.stream.isTTY) this.stream.write(`\r${line}\x1b[K`);
    else this.stream.write(`${line}\n`);
  }

  finish(): void {
    if (this.stream.isTTY) this.stream.write('\n');
  }
}

/** 75 → "1m15s", 4000 → "1h06m". */
export function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
