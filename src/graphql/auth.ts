import type { AuthChecker } from 'type-graphql';
import { forbidden, unauthenticated } from '../errors';
import type { Role } from '../store/keys';
import type { Context } from './context';

export type { Principal, Role } from '../store/keys';

/**
 * `@Authorized('admin')` on a mutation: throws rather than answering false, so the error names
 * what was missing (type-graphql passes a thrown error through as the field's error).
 */
export const authChecker: AuthChecker<Context, Role> = ({ context, info }, roles) => {
  const field = info.fieldName;
  const principal = context.principal;
  if (!principal) {
    throw unauthenticated(`${field} needs an API key${roles.length ? ` with the ${roles.join(' or ')} role` : ''}: send "Authorization: Bearer <key>"`);
  }
  if (roles.length > 0 && !roles.includes(principal.role)) {
    throw forbidden(`${field} needs the ${roles.join(' or ')} role; key "${principal.name}" has the ${principal.role} role`);
  }
  return true;
};

/** The key in an `Authorization` header value; undefined when there is no header. */
export function bearerKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match) throw unauthenticated('the Authorization header must be "Bearer <key>"');
  return match[1];
}

/** READ_ACCESS=key: every operation (queries and introspection included) needs a valid key. */
export function checkReadAccess(context: Context): void {
  if (context.config.readAccess === 'key' && !context.principal) {
    throw unauthenticated('this server needs an API key for every request (READ_ACCESS=key): send "Authorization: Bearer <key>"');
  }
}
