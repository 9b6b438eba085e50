/**
 * The page's side of the console's /api: one GET or POST per route of the contract
 * (ops/console-api.ts), typed by it, and `useApi`, the hook every view loads with. The session cookie
 * goes with each request (same origin); the server checks it, the Origin and the Host.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { HookledgerError } from '../../core/errors';
import type { ApiErrorBody, ConsoleGets, ConsolePosts, GetPath, PostPath } from '../../ops/console-api';

/** A route that answered with an error status: its message, or the status when it sent none. */
export class ApiError extends HookledgerError {
  override readonly name: string = 'ApiError';
}

/** `?k=v&...` of the parameters that are set (undefined and '' left out), or '' when none is. */
export function qs(params: object): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params) as Array<[string, unknown]>) if (v !== undefined && v !== '') search.set(k, String(v));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** A GET route's address, for a link (the usage CSV's download). */
export const apiHref = <P extends GetPath>(path: P, query: ConsoleGets[P]['query']): string => `/api${path}${qs(query)}`;

async function request<T>(path: string, body?: object): Promise<T> {
  const response = await fetch(`/api${path}`, {
    method: body ? 'POST' : 'GET',
    credentials: 'same-origin',
    headers: body ? { 'content-type': 'application/json' } : {},
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const data = (await response.json().catch(() => ({}))) as T & Partial<ApiErrorBody>;
  if (!response.ok) throw new ApiError(data.message ?? `${response.status} ${response.statusText}`);
  return data;
}

export const post = <P extends PostPath>(path: P, body: ConsolePosts[P]['body']): Promise<ConsolePosts[P]['response']> =>
  request(path, body);

export interface Loaded<T> {
  readonly data?: T;
  readonly error?: string;
  readonly loading: boolean;
  readonly reload: () => void;
}

/**
 * One GET, re-run when its address changes (and every `refreshMs` when given); none while `path` is
 * undefined.
 */
export function useApi<P extends GetPath>(
  path: P | undefined,
  query: ConsoleGets[P]['query'],
  refreshMs?: number,
): Loaded<ConsoleGets[P]['response']> {
  type Response = ConsoleGets[P]['response'];
  const address = path === undefined ? undefined : `${path}${qs(query)}`;
  const [state, setState] = useState<{ data?: Response; error?: string; loading: boolean }>({ loading: address !== undefined });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (address === undefined) return;
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    request<Response>(address).then(
      (data) => live && setState({ data, loading: false }),
      (error: Error) => live && setState({ error: error.message, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [address, tick]);
  useEffect(() => {
    if (!refreshMs) return;
    const timer = setInterval(() => setTick((t) => t + 1), refreshMs);
    return () => clearInterval(timer);
  }, [refreshMs]);
  return { ...state, reload: useCallback(() => setTick((t) => t + 1), []) };
}
