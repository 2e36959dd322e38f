import type { Database } from '../store/db';
import { createApiKey, hasAdminKey } from '../store/keys';

/**
 * At server start: --demo makes a fresh admin key so every mutation can be tried from the
 * README; otherwise, when no admin key exists, say how to make one. Goes to stderr, as the
 * rest of the start-up report does.
 */
export async function announceKeys(db: Database, demo: boolean, url: string): Promise<void> {
  if (demo) {
    const { key } = await createApiKey(db, { role: 'admin', name: 'demo' });
    console.error(
      `demo admin key (new at every start; revoke old ones with \`dhr keys revoke\`): ${key}\n` +
        `  curl ${url} -H 'content-type: application/json' -H 'Authorization: Bearer ${key}' -d '{"query":"mutation { … }"}'`,
    );
  } else if (!(await hasAdminKey(db))) {
    console.error('no admin API key yet: mutations will answer UNAUTHENTICATED; create one with `dhr keys create --role admin`');
  }
}
