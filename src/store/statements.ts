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

/**
 * The default of PostgresOptions.preparedStatements (DB_PREPARED_STATEMENTS). Here, not in
 * postgres.ts, so that the table of variables (what `dhr --help` prints) loads no driver.
 */
export const DEFAULT_PREPARED_STATEMENTS = 16;
