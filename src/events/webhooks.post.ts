import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { hostOf, isPublicAddress, privateAddressError, publicOnlyLookup } from './webhooks.address.js';

/** How one attempt ended: a status (2xx is success), or a network error, timeout or refusal (no status). */
export interface PostOutcome {
  statusCode: number | null;
  /** Why it failed; null on a 2xx. */
  error: string | null;
  durationMs: number;
}

/** The most of a response body read; the rest is discarded with the connection. */
const MAX_BODY = 4096;

/** What a poster needs to know. */
export interface PosterOptions {
  /** Connections are made to any address (WEBHOOKS_ALLOW_PRIVATE); else only to public ones. */
  allowPrivate: boolean;
  /** Most open connections to one endpoint (host and port). */
  maxSockets: number;
  /** The time limit of a whole attempt (default 10 s). */
  timeoutMs?: number;
}

/** Posts webhook bodies over kept-alive connections. */
export interface Poster {
  post(url: string, headers: Record<string, string>, body: string): Promise<PostOutcome>;
  close(): void;
}

/**
 * A poster of webhook deliveries: a POST per attempt, over kept-alive connections (one agent per
 * scheme), redirects never followed (a 3xx is a failure), the whole attempt limited in time, at
 * most 4 KB of the answer read. Unless private addresses are allowed, each connection's address
 * is checked as it is made (`publicOnlyLookup`; an IP address in the URL is checked before).
 */
export function createPoster(opts: PosterOptions): Poster {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const agentOptions = { keepAlive: true, maxSockets: opts.maxSockets, maxFreeSockets: opts.maxSockets };
  const agents = { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) };
  const lookup = opts.allowPrivate ? undefined : publicOnlyLookup;

  const post = (url: string, headers: Record<string, string>, body: string): Promise<PostOutcome> => {
    const started = performance.now();
    const outcome = (statusCode: number | null, error: string | null): PostOutcome => ({
      statusCode,
      error,
      durationMs: Math.round(performance.now() - started),
    });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return Promise.resolve(outcome(null, 'the url is not valid'));
    }
    const agent = target.protocol === 'http:' || target.protocol === 'https:' ? agents[target.protocol] : null;
    if (!agent) return Promise.resolve(outcome(null, `the url's scheme ${target.protocol} is not http or https`));
    const host = hostOf(target);
    if (lookup && isIP(host) && !isPublicAddress(host)) return Promise.resolve(outcome(null, privateAddressError(host, host).message));

    return new Promise((resolve) => {
      let settled = false;
      const done = (statusCode: number | null, error: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome(statusCode, error));
      };
      const request = (target.protocol === 'https:' ? https : http).request(target, {
        method: 'POST',
        agent,
        lookup,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      const timer = setTimeout(() => request.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
      request.on('error', (err) => done(null, err.message || String(err)));
      request.on('response', (res) => {
        const status = res.statusCode ?? 0;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          // Past the limit the answer is not read: the connection goes with the rest of it.
          if (text.length > MAX_BODY) res.destroy();
        });
        const finish = () => {
          if (status >= 200 && status < 300) return done(status, null);
          const why = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
          const answer = text.trim().slice(0, 200);
          done(status, `HTTP ${status}${why}${answer ? `: ${answer}` : ''}`);
        };
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
      });
      request.end(body);
    });
  };

  return {
    post,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

/** Signs the attempts of one endpoint: the headers of one POST of an event's body at `at`. */
export type Signer = (eventId: string, at: Date, body: string) => Record<string, string>;

/**
 * The signer of an endpoint with this signing secret (`whsec_…`): Standard Webhooks' headers
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`), which any receiver can verify with
 * the secret, and our user agent.
 */
export function webhookSigner(secret: string): Signer {
  const webhook = new Webhook(secret);
  return (eventId, at, body) => ({
    'user-agent': 'Campaign-API-Webhooks',
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': webhook.sign(eventId, at, body),
  });
}
