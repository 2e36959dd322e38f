// Prisma 7 reads its settings here. Only `prisma generate` runs in this project: schema changes are
// plain SQL in migrations/ applied by src/store/migrate.ts (Prisma's migrate needs a download).
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
});
