/**
 * Every view has a URL: the hash holds the view and its parameters (#/search?q=…,
 * #/document/RG9jdW1lbnQ6MTI?section=…&passage=…, with the API's global ids; #/admin), so links can be
 * shared and Back works. A link with integer ids (before global ids) still opens its document.
 */
import { useEffect, useState } from 'react';

export interface Route {
  view: 'search' | 'document' | 'admin';
  id?: string;
  params: URLSearchParams;
}

export function parseRoute(hash: string): Route {
  const [path, query = ''] = hash.replace(/^#\/?/, '').split('?');
  const [view, id] = path.split('/');
  const params = new URLSearchParams(query);
  if (view === 'document' && id) return { view, id, params };
  if (view === 'admin') return { view, params };
  return { view: 'search', params };
}

export const href = (view: string, params: Record<string, string | number | undefined> = {}): string => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return `#/${view}${s ? `?${s}` : ''}`;
};

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}
