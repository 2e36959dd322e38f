import type { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { Pool } from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../generated/prisma/client';
import type { StatementCounter } from './statements';

export type { PrismaClient };

/**
 * The typed Prisma client over the very connection the rest of the store uses (driver adapters:
 * the same PGlite instance, or the same pg pool), so both see one database and one statement count.
 */
export function createPrismaClient(connection: { pglite: PGlite } | { pool: Pool }, statements: StatementCounter): PrismaClient {
  const adapter = 'pglite' in connection ? new PrismaPGlite(connection.pglite) : new PrismaPg(connection.pool);
  const client = new PrismaClient({ adapter, log: [{ emit: 'event', level: 'query' }] });
  client.$on('query', () => statements.add());
  return client;
}
