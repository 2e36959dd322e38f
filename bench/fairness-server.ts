/**
 * The server of `bench:fairness`, in a process of its own (as a deployment runs it): the clients'
 * loops and their parsing of large answers then do not share the server's one thread, which they
 * did when both ran in the bench's process. Reads FAIRNESS_DB_URL, FAIRNESS_POOL and the server's
 * own environment (DB_CONNECTIONS_PER_REQUEST, LOG_LEVEL); prints its URL as one line; stops on SIGTERM.
 */
import 'reflect-metadata';
import { loadConfig } from '../src/config';
import { PostgresDatabase } from '../src/store/postgres';
import { startServer } from '../src/server';

async function main(): Promise<void> {
  const db = new PostgresDatabase({ url: process.env.FAIRNESS_DB_URL!, maxConnections: Number(process.env.FAIRNESS_POOL) });
  const server = await startServer(db, loadConfig({ ...process.env, PORT: '0' }));
  console.log(server.url);
  process.once('SIGTERM', () => {
    void server
      .stop()
      .then(() => db.close())
      .then(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
