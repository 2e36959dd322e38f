import { DomainError, ErrorCode } from '../errors';
import type { Database, Queryable } from './db';

/** Per mode, parameter name → value, as stored (the pipeline checks them against the parameter table). */
export type StoredSettings = Record<string, Record<string, unknown>>;

export interface SettingsVersion {
  version: number;
  settings: StoredSettings;
  setBy: string;
  note: string | null;
  evidence: Record<string, unknown> | null;
  previous: number | null;
  createdAt: Date;
}

const COLUMNS = `version, settings, set_by AS "setBy", note, evidence, previous, created_at AS "createdAt"`;

const asVersion = (r: SettingsVersion): SettingsVersion => ({ ...r, createdAt: new Date(r.createdAt) });

/** The settings in force (the newest version), or undefined when none was ever set. */
export async function currentSettings(db: Queryable): Promise<SettingsVersion | undefined> {
  const [row] = await db.query<SettingsVersion>(`SELECT ${COLUMNS} FROM retrieval_settings ORDER BY version DESC LIMIT 1`);
  return row && asVersion(row);
}

/** Versions, newest first. */
export async function settingsHistory(db: Queryable, limit = 20): Promise<SettingsVersion[]> {
  const rows = await db.query<SettingsVersion>(`SELECT ${COLUMNS} FROM retrieval_settings ORDER BY version DESC LIMIT $1`, [limit]);
  return rows.map(asVersion);
}

/**
 * Adds a version built from the one in force (`change` gets it, or undefined). The table is locked
 * for the transaction, so two writers never build on the same version: the second waits and
 * builds on the first's.
 */
export function addSettingsVersion(
  db: Database,
  change: (
    current: SettingsVersion | undefined,
    tx: Queryable,
  ) => Promise<{ settings: StoredSettings; setBy: string; note?: string; evidence?: Record<string, unknown>; previous?: number | null }>,
): Promise<SettingsVersion> {
  return db.transaction(async (tx) => {
    await tx.query('LOCK TABLE retrieval_settings IN SHARE ROW EXCLUSIVE MODE');
    const current = await currentSettings(tx);
    const next = await change(current, tx);
    const [row] = await tx.query<SettingsVersion>(
      `INSERT INTO retrieval_settings (version, settings, set_by, note, evidence, previous)
       VALUES ($1, $2::jsonb, $3, $4, $5::jsonb, $6) RETURNING ${COLUMNS}`,
      [
        (current?.version ?? 0) + 1,
        JSON.stringify(next.settings),
        next.setBy,
        next.note ?? null,
        next.evidence === undefined ? null : JSON.stringify(next.evidence),
        next.previous === undefined ? (current?.version ?? null) : next.previous,
      ],
    );
    return asVersion(row);
  });
}

/**
 * Restores the settings in force before the current version, as a new version whose `previous`
 * is that version's own (so rollbacks walk back one version each). Nothing to go back to: CONFLICT.
 */
export function rollbackSettings(db: Database, setBy: string): Promise<SettingsVersion> {
  return addSettingsVersion(db, async (current, tx) => {
    if (!current) throw new DomainError(ErrorCode.CONFLICT, 'no retrieval settings were ever set, so there is nothing to roll back', { argument: 'version' });
    if (current.previous === null) {
      throw new DomainError(ErrorCode.CONFLICT, `retrieval settings version ${current.version} is the first: there is no previous version to roll back to`, {
        argument: 'version',
      });
    }
    const [before] = await tx.query<SettingsVersion>(`SELECT ${COLUMNS} FROM retrieval_settings WHERE version = $1`, [current.previous]);
    return { settings: before.settings, setBy, note: `rollback of version ${current.version} to version ${before.version}`, previous: before.previous };
  });
}
