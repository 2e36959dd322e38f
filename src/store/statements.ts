/** Counts every statement sent, for tests that bound round trips and for stats. */
export class StatementCounter {
  count = 0;
  add(): void {
    this.count += 1;
  }
  reset(): void {
    this.count = 0;
  }
}
