import autocannon from 'autocannon';

export interface LoadOptions {
  /** Base URL of the server. */
  url: string;
  /** Path with query; or a function giving each request's path (e.g. a random id). */
  path: string | (() => string);
  headers?: Record<string, string>;
  connections?: number;
  /** Seconds. */
  duration?: number;
  /** Every answer is expected to be a redirect (3xx) instead of a 2xx (the click route). */
  redirects?: boolean;
  /** Each request a POST of a urlencoded body built afresh, with extra headers (a create, a keyed create). */
  post?: () => { body: string; headers?: Record<string, string> };
}

export interface LoadResult {
  /** Mean requests per second over the run (autocannon's `Req/Sec` average). */
  rps: number;
  /** Latency percentiles in ms. */
  p50: number;
  p99: number;
  requests: number;
  /** Responses that were not 2xx, and socket errors/timeouts: a valid run has none. */
  non2xx: number;
  errors: number;
}

/**
 * One autocannon run from this process against `url + path` (10 connections, 10 s by default).
 * Throws when any response is not 2xx (3xx with `redirects`) or any request fails, so a figure never
 * measures errors.
 */
export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const pathFn = typeof opts.path === 'function' ? opts.path : null;
  const post = opts.post;
  const result = await autocannon({
    url: opts.url + (pathFn ? pathFn() : opts.path),
    connections: opts.connections ?? 10,
    duration: opts.duration ?? 10,
    headers: opts.headers,
    requests: post
      ? [
          {
            setupRequest: (req) => {
              const { body, headers } = post();
              const path = pathFn ? pathFn() : req.path;
              const all = { ...req.headers, 'content-type': 'application/x-www-form-urlencoded', ...headers };
              return { ...req, method: 'POST', path, body, headers: all };
            },
          },
        ]
      : pathFn
        ? [{ setupRequest: (req) => ({ ...req, path: pathFn() }) }]
        : undefined,
  });
  const out: LoadResult = {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    // A run of redirects counts its 3xx answers as the good ones.
    non2xx: opts.redirects ? result.non2xx - result['3xx'] + result['2xx'] : result.non2xx,
    errors: result.errors + result.timeouts,
  };
  if (out.non2xx || out.errors) {
    throw new Error(
      `load on ${opts.url}${typeof opts.path === 'string' ? opts.path : ''}: ${out.non2xx} unexpected responses, ${out.errors} errors`,
    );
  }
  return out;
}
