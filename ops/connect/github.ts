/**
 * GitHub's repository and organization webhooks (`/repos/{owner}/{repo}/hooks`, `/orgs/{org}/hooks`)
 * through `@octokit/rest` pointed at `baseUrl`. GitHub takes the secret from us (`config.secret`)
 * and never shows it again (it lists `********`), so `connect` generates and stores one before
 * sending it. The hook's `last_response` is GitHub's delivery status.
 */

import type { Octokit } from '@octokit/rest';
import { ProviderApiError, retryAfterMs } from '../../adapters/provider-events';
import { lazyOctokit } from '../../adapters/provider-sdks';
import { GAP_APIS } from '../../core/gaps';
import { providerFailure, providerReason, RateLimitedError, withRateLimitRetries } from './http';
import type { ProviderRegistrar, RegistrarOptions, RemoteEndpoint } from './types';

/** GitHub's largest list page. */
const GITHUB_PAGE = 100;
/** Where hooks are registered: a repository's or an organization's (`gapCheck.hook` without `/hooks/<id>`). */
export const GITHUB_HOOK_SCOPE = /^(repos\/[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+|orgs\/[A-Za-z0-9_.-]+)$/;

interface GithubHook {
  readonly id: number;
  readonly active: boolean;
  readonly events: string[];
  readonly config: { readonly url?: string };
  readonly last_response?: { readonly code: number | null; readonly status: string | null; readonly message: string | null };
}

export function githubRegistrar(options: RegistrarOptions): ProviderRegistrar {
  const scope = options.hook;
  if (!scope || !GITHUB_HOOK_SCOPE.test(scope)) {
    throw new ProviderApiError(
      'github',
      `no repository or organization to register the hook on: give repos/<owner>/<repo> or orgs/<org> (got ${scope ?? 'none'})`,
    );
  }
  const baseUrl = (options.baseUrl ?? GAP_APIS.github.baseUrl).replace(/\/+$/, '');
  const octokit = lazyOctokit(options.apiKey, baseUrl, 'hookledger-connect');
  const call = <T>(run: (sdk: Octokit) => Promise<T>) =>
    withRateLimitRetries('github', options, async () => {
      try {
        return await run(await octokit());
      } catch (error) {
        throw githubFailure(options, error);
      }
    });
  const body = (input: { url: string; events: readonly string[]; secret?: string }) => ({
    active: true,
    events: [...input.events],
    config: { url: input.url, content_type: 'json', insecure_ssl: '0', ...(input.secret ? { secret: input.secret } : {}) },
  });
  return {
    provider: 'github',
    secretFrom: 'us',
    async list() {
      const out: RemoteEndpoint[] = [];
      for (let page = 1; ; page++) {
        const response = await call((sdk) => sdk.request(`GET /${scope}/hooks`, { per_page: GITHUB_PAGE, page }));
        out.push(...(response.data as GithubHook[]).map(remoteOf));
        if (!/rel="next"/.test(response.headers.link ?? '')) return out;
      }
    },
    async create(input) {
      const response = await call((sdk) => sdk.request(`POST /${scope}/hooks`, { name: 'web', ...body(input) }));
      return { endpoint: remoteOf(response.data as GithubHook) };
    },
    async update(id, input) {
      const response = await call((sdk) => sdk.request(`PATCH /${scope}/hooks/{hook_id}`, { hook_id: Number(id), ...body(input) }));
      return { endpoint: remoteOf(response.data as GithubHook) };
    },
    async remove(id) {
      await call((sdk) => sdk.request(`DELETE /${scope}/hooks/{hook_id}`, { hook_id: Number(id) }));
    },
  };
}

/** Octokit's RequestError as ours; GitHub answers a spent rate limit with 403 (or 429) and Retry-After or x-ratelimit-remaining: 0. */
function githubFailure(options: RegistrarOptions, error: unknown): Error {
  const status = (error as { status?: number }).status;
  if (typeof status !== 'number') return new ProviderApiError('github', error instanceof Error ? error.message : String(error));
  const response = (error as { response?: { headers?: Record<string, string | undefined>; data?: unknown } }).response;
  const headers = response?.headers ?? {};
  if (status === 403 && (headers['retry-after'] !== undefined || headers['x-ratelimit-remaining'] === '0')) {
    const reset = headers['x-ratelimit-reset'];
    const untilReset = reset !== undefined && /^\d+$/.test(reset) ? Math.max(0, Number(reset) * 1000 - Date.now()) : undefined;
    return new RateLimitedError(retryAfterMs(headers['retry-after']) ?? untilReset);
  }
  return providerFailure('github', options.credential, {
    status,
    retryAfter: headers['retry-after'],
    reason: providerReason(response?.data, error instanceof Error ? error.message : ''),
  });
}

function remoteOf(hook: GithubHook): RemoteEndpoint {
  const last = hook.last_response;
  const status = last?.status ? `${last.status}${last.code ? ` (${last.code})` : ''}` : undefined;
  return { id: String(hook.id), url: hook.config.url ?? '', enabled: hook.active, events: hook.events, ...(status ? { status } : {}) };
}
