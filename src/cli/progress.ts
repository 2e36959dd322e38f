/** A one-line progress bar on stderr; plain periodic lines when stderr is not a terminal (CI logs). */
export class ProgressBar {
  private done = 0;
  private readonly started = Date.now();
  private lastDraw = 0;

  constructor(
    private total: number,
    private readonly label: string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
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

  private draw(extra: string): void {
    const width = 30;
    const fraction = this.total > 0 ? this.done / this.total : 1;
    const filled = Math.round(fraction * width);
    const seconds = (Date.now() - this.started) / 1000;
    const line = `${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.done}/${this.total} ${extra} ${seconds.toFixed(1)}s`;
    if (this.stream.isTTY) this.stream.write(`\r${line}`);
    else this.stream.write(`${line}\n`);
  }

  finish(): void {
    if (this.stream.isTTY) this.stream.write('\n');
  }
}
