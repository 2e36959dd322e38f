/** GraphQL over fetch to this server ('self' only: the CSP allows nothing else). */

const KEY = 'dhr.adminKey';

/** The admin key, entered once and kept for this tab's session (never in localStorage or the URL). */
export const adminKey = {
  get: (): string => sessionStorage.getItem(KEY) ?? '',
  set: (key: string): void => (key ? sessionStorage.setItem(KEY, key) : sessionStorage.removeItem(KEY)),
};

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

export async function gql<T = any>(query: string, variables?: Record<string, unknown>, withKey = false): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const key = adminKey.get();
  if (withKey && key) headers.authorization = `Bearer ${key}`;
  const response = await fetch('/', { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  let body: { data?: T; errors?: { message: string; extensions?: { code?: string } }[] };
  try {
    body = await response.json();
  } catch {
    throw new ApiError(`the server answered ${response.status} without JSON`);
  }
  if (body.errors?.length) throw new ApiError(body.errors[0].message, body.errors[0].extensions?.code);
  return body.data as T;
}
