/** One parsed line of the server's JSON log. */
export type LogLine = Record<string, any> & { level: number; msg: string };

/**
 * A pino destination that keeps the log lines in memory, parsed, instead of writing them to
 * stderr: tests read what the server logged (and keep the test output quiet).
 */
export function captureLog(): { destination: { write(line: string): void }; lines: LogLine[]; text: () => string } {
  const lines: LogLine[] = [];
  const raw: string[] = [];
  return {
    destination: {
      write(line: string) {
        raw.push(line);
        lines.push(JSON.parse(line) as LogLine);
      },
    },
    lines,
    text: () => raw.join(''),
  };
}
