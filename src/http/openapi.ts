import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { FailedFields, FailedText } from './schemas.js';
import type { RouteScope } from './scopes.js';
import { IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, KEY_IN_PROGRESS, KEY_INVALID, KEY_REUSED } from './idempotency.js';
import { isSecret, SECRET_MARK } from './secret-fields.js';
import { SendGridFailure, speaksSendGrid, V3Forbidden } from './sendgrid.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The request body as the document shows it, for a route that reads its body itself (the CSV
     * upload streams its multipart parts): documented, never validated by Fastify.
     */
    documentedBody?: object;
  }
}

/** Operation tags, by path prefix (the first match wins), in the order the reference shows them. */
const TAGS: Array<{ name: string; description: string; prefixes: string[] }> = [
  { name: 'Contact types', description: 'Lists that contacts belong to.', prefixes: ['/contacts-type'] },
  {
    name: 'Contacts',
    description: "Contacts, with their custom values; CSV sample and import; an address's data, exported or erased.",
    prefixes: ['/contacts/'],
  },
  { name: 'Fields', description: "Reserved fields and the account's custom fields.", prefixes: ['/reserve-fields', '/custom-fields'] },
  { name: 'Segments', description: 'Contacts of a type that match conditions, plus emails added by hand.', prefixes: ['/segment/'] },
  {
    name: 'Unsubscribes',
    description: 'Global unsubscribes and unsubscribe groups.',
    prefixes: ['/global-unsubscribes', '/unsubscribes-groups'],
  },
  { name: 'Senders', description: 'From addresses, verified by a mailed link.', prefixes: ['/sender', '/senders'] },
  {
    name: 'Sending domains',
    description:
      "Domains mail is sent from: each one's DKIM key, the DNS records to publish, and their checks (DKIM, SPF, DMARC, alignment, MX).",
    prefixes: ['/sending-domains'],
  },
  { name: 'Notifications', description: 'Who is mailed about account events.', prefixes: ['/notification-recipient'] },
  {
    name: 'Templates',
    description: 'Shipped design templates, their preview images and the placeholder names.',
    prefixes: ['/get-design/', '/get-dynamic/', '/images/templates/'],
  },
  {
    name: 'Designs',
    description: "The account's saved designs (MJML), made in the console's editor; sends use one as template 1 with its `template_json`.",
    prefixes: ['/designs/details', '/designs/create', '/designs/update', '/designs/duplicate', '/designs/delete'],
  },
  {
    name: 'Media',
    description:
      "The account's image library: images uploaded once, stored in the database and served at public URLs (no keys) for designs to use.",
    prefixes: ['/media'],
  },
  {
    name: 'Single sends',
    description: 'One-off mailings to contact types and segments, at once or scheduled, with their statistics.',
    prefixes: ['/single-send/', '/single/send/'],
  },
  {
    name: 'Automations',
    description: 'Sequences of timed emails sent to each contact who joins a contact type or segment, and their emails (schedules).',
    prefixes: ['/automations'],
  },
  {
    name: 'Bounces and complaints',
    description:
      'Bounces and spam complaints that arrive after the send (raw mail, keyed reports) and the suppressed addresses they leave.',
    prefixes: ['/bounces/', '/suppressions', '/inbound/email/'],
  },
  { name: 'Forms', description: 'Sign-up forms with double opt-in, and their public side (no keys).', prefixes: ['/forms', '/subscribe/'] },
  {
    name: 'Webhooks',
    description: "Outgoing webhooks: the account's receivers of events (signed, Standard Webhooks) and their delivery attempts.",
    prefixes: ['/webhooks/'],
  },
  { name: 'Account', description: "The account's campaign figures at a glance.", prefixes: ['/account/'] },
  {
    name: 'Outbox',
    description: 'Where mail goes; without an SMTP server, the newest mails written to the outbox folder.',
    prefixes: ['/outbox'],
  },
  {
    name: 'Transactional templates',
    description:
      "SendGrid's v3 dynamic templates and their versions (Handlebars), in SendGrid's shapes: its clients work with only their base URL changed. Failures under `/v3/` are SendGrid's error lists.",
    prefixes: ['/v3/templates'],
  },
  { name: 'API keys', description: "The account's keys: named, scoped, revocable at once.", prefixes: ['/keys'] },
  {
    name: 'People and sessions',
    description: 'The people of the account and their roles; sign-in, sessions, passwords and two-factor authentication.',
    prefixes: ['/users', '/session', '/me/'],
  },
  { name: 'Audit log', description: 'Who changed what, and every sign-in.', prefixes: ['/audit-log'] },
  { name: 'Geo', description: 'Countries, states and cities (the ids contacts and senders use).', prefixes: ['/get/country-state-city'] },
  {
    name: 'Relay webhooks',
    description:
      "Bounces and complaints posted by the sending relays' webhooks (SendGrid, Mailgun, Postmark, Amazon SES through SNS); no keys, the provider's signature or password instead.",
    prefixes: ['/inbound/sendgrid', '/inbound/mailgun', '/inbound/postmark', '/inbound/ses'],
  },
  {
    name: 'Public pages',
    description:
      'The open pixel, the click redirect and the unsubscribe preferences page linked from each mail, the design preview of automation emails, and the console (`/app`); no keys needed.',
    prefixes: ['/t/open/', '/t/click/', '/u/', '/designs/'],
  },
  {
    name: 'Operations',
    description: 'Health, metrics and this reference; no keys needed.',
    prefixes: ['/health', '/metrics', '/openapi.json', '/docs'],
  },
];

/** The tag of a route, from its path. */
export function tagOf(url: string): string | undefined {
  return TAGS.find((t) => t.prefixes.some((p) => url === p || url.startsWith(p)))?.name;
}

/** Body media types every form-taking route reads alike (see docs/api-notes.md, "Request bodies"). */
const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'application/json'];

const KEYS_NOTE =
  "Every request carries one of the account's keys as two headers, `PublicKey` and `SecretKey` (both are " +
  'required; create an account with `npm run accounts:create`, more keys with `POST /keys/create`), or as one header, ' +
  '`Authorization: Bearer <public key>.<secret key>`. Each route needs ' +
  'one scope (`x-scope`, and named in its description): a key or person without it gets 403. Routes marked without security ' +
  '(health, metrics, this reference, template images, the sender verification page, the open pixel, the unsubscribe page, the design preview, the bounce intake, the relay webhooks and the sign-up form routes) take none.';

function packageVersion(): string {
  // Two levels up from both src/http and dist/http.
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/**
 * The one style element Swagger UI adds (in the SVG logo of its top bar), allowed by its hash. The
 * browser test of /docs fails if a new release of the package brings another.
 */
const SWAGGER_LOGO_STYLE = '.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}';

/**
 * The headers of every answer under /docs. Swagger UI's page loads its scripts and styles as files
 * of this server (no inline script; React sets styles through the DOM, which a policy does not
 * block; one style element, by hash), its icons as `data:` images in its CSS, and fetches the
 * document and the "Try it out" requests from this server: nothing else is allowed. Never framed,
 * never sniffed, no referrer sent along.
 */
export const DOCS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy':
    `default-src 'none'; script-src 'self'; style-src 'self' 'sha256-${createHash('sha256').update(SWAGGER_LOGO_STYLE).digest('base64')}'; ` +
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; " +
    "frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
});

/** The optional `Idempotency-Key` header of every keyed POST (docs/idempotency.md). */
const IDEMPOTENCY_HEADERS = {
  type: 'object',
  properties: {
    [IDEMPOTENCY_KEY]: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      pattern: '^[!-~]+$',
      description:
        'On POST: makes a retry safe. The first answer to this key (1–255 visible ASCII characters, unique per ' +
        'account) is kept 24 hours and given again, with `Idempotent-Replayed: true`, to the same request (method, ' +
        'URL and body) with the same key; nothing is done a second time. 4xx answers are kept; 5xx answers are not. ' +
        `A secret in the answer (a field marked \`${SECRET_MARK}\`: a key's or a webhook's secret) is not kept: a replay has it as null.`,
    },
  },
};

const REPLAYED = {
  [IDEMPOTENT_REPLAYED]: {
    type: 'string',
    enum: ['true'],
    description: 'Present on an answer given again for an `Idempotency-Key` seen before; nothing was done this time.',
  },
};

/**
 * Adds to a keyed POST's document what `Idempotency-Key` brings: the header, the replay header on
 * the answers that can be kept, the 409 of a key in use and the 422 of a malformed or reused one,
 * and, for each field its answers mark as secret, that a replay has it as null.
 * Copies, never changes, the route's own schemas (they serialise its answers).
 */
function documentIdempotency(s: Record<string, unknown>, v3: boolean): void {
  const headers = s.headers as { properties?: object } | undefined;
  s.headers = headers ? { ...headers, properties: { ...headers.properties, ...IDEMPOTENCY_HEADERS.properties } } : IDEMPOTENCY_HEADERS;
  const responses = s.response as Record<string, Record<string, unknown>> | undefined;
  if (!responses) return;
  const out: Record<string, Record<string, unknown>> = {};
  for (const [code, schema] of Object.entries(responses)) {
    const kept = Number(code) < 500 && !['400', '401', '413', '415', '429'].includes(code);
    out[code] = kept ? { ...withNullSecrets(schema), headers: { ...(schema.headers as object), ...REPLAYED } } : schema;
  }
  if (v3) {
    out['409'] = SendGridFailure(`${IDEMPOTENCY_KEY} in use: \`${KEY_IN_PROGRESS}\``);
    out['422'] = SendGridFailure(`\`${IDEMPOTENCY_KEY}\` reused with another request (\`${KEY_REUSED}\`), field \`${IDEMPOTENCY_KEY}\`.`);
    s.response = out;
    return;
  }
  const inUse = `Or, with \`${IDEMPOTENCY_KEY}\`: \`${KEY_IN_PROGRESS}\``;
  out['409'] = out['409']
    ? { ...out['409'], description: `${String(out['409'].description ?? '')} ${inUse}` }
    : { ...FailedText, description: `${IDEMPOTENCY_KEY} in use: \`${KEY_IN_PROGRESS}\`` };
  const badKey =
    `\`${IDEMPOTENCY_KEY}\` malformed (\`${KEY_INVALID}\`, keyed by the header's name) or reused with another ` +
    `request (the text \`${KEY_REUSED}\`).`;
  out['422'] = out['422']
    ? { ...out['422'], description: `${String(out['422'].description ?? '')} Or: ${badKey}` }
    : { ...FailedFields, description: badKey };
  s.response = out;
}

/**
 * A copy of an answer's schema in which each property marked as secret may also be null: a
 * secret, shown once, is null in an answer given again for an `Idempotency-Key` (it is never kept).
 * The property keeps its mark. Unchanged (the same object) when it marks none.
 */
function withNullSecrets(schema: Record<string, unknown>): Record<string, unknown> {
  type Obj = Record<string, unknown>;
  const note = `Null when the answer is given again for an \`${IDEMPOTENCY_KEY}\` (\`${IDEMPOTENT_REPLAYED}: true\`): a secret is shown once and never kept.`;
  const walk = (node: Obj): Obj => {
    if (isSecret(node))
      return { anyOf: [node, { type: 'null' }], description: `${String(node.description ?? '')} ${note}`.trim(), [SECRET_MARK]: true };
    let copy: Obj | null = null;
    const set = (key: string, value: unknown) => ((copy ??= { ...node })[key] = value);
    const props = node.properties as Record<string, Obj> | undefined;
    if (props) {
      const next = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, walk(v)]));
      if (Object.keys(props).some((k) => next[k] !== props[k])) set('properties', next);
    }
    if (node.items && typeof node.items === 'object') {
      const items = walk(node.items as Obj);
      if (items !== node.items) set('items', items);
    }
    for (const key of ['anyOf', 'oneOf', 'allOf']) {
      const branches = node[key] as Obj[] | undefined;
      if (!branches) continue;
      const next = branches.map(walk);
      if (next.some((b, i) => b !== branches[i])) set(key, next);
    }
    return copy ?? node;
  };
  return walk(schema);
}

/**
 * Adds a keyed route's scope to its document: `x-scope`, a sentence in its description, and the 403
 * of a caller without it. A route that needs none says so.
 */
function documentScope(s: Record<string, unknown>, scope: RouteScope | undefined, v3: boolean): void {
  if (scope === undefined) return;
  s['x-scope'] = scope;
  const sentence =
    scope === 'none' ? 'Scope: none (any key or person of the account).' : `Scope: \`${scope}\` (\`write\` includes \`read\`).`;
  s.description = s.description ? `${String(s.description)} ${sentence}` : sentence;
  if (scope === 'none') return;
  if (v3) {
    s.response = { ...(s.response as object), 403: V3Forbidden(scope) };
    return;
  }
  const forbidden = {
    ...FailedText,
    description: `The key or person lacks the scope \`${scope}\`: \`This key is not allowed to ${scope}.\` (for a person: \`You are not allowed to ${scope}.\`). ${SESSION_403}`,
  };
  s.response = { ...(s.response as object), 403: forbidden };
}

/**
 * Marks a GET route whose purpose is an action (`config.action`): `x-action`, and a sentence. Every
 * other GET route changes nothing.
 */
function documentAction(s: Record<string, unknown>): void {
  s['x-action'] = true;
  const sentence =
    'An action, though called with GET (`x-action`): it changes state, so by session it needs the `X-CSRF-Token`, and it is ' +
    'written to the audit log. Every other GET route changes nothing.';
  s.description = s.description ? `${String(s.description)} ${sentence}` : sentence;
}

/** The 403 a request by session can get before its scope is looked at. */
const SESSION_403 =
  'By session: `Invalid CSRF token` (a request that is not GET or HEAD without the session’s `X-CSRF-Token`), or, in an ' +
  'account that requires two-factor authentication, for a person without it.';

/** A route of the signed-in person themselves: the session cookie, never keys, and its 403s. */
function documentSessionOnly(s: Record<string, unknown>): void {
  s.security = [{ Session: [] }];
  s['x-auth'] = 'session';
  s.response = { ...(s.response as object), 403: { ...FailedText, description: SESSION_403 } };
}

/**
 * How each route appears in the document: public routes need no keys, bodies are documented with
 * the form media types, and every operation gets its resource's tag.
 */
function documentRoute({ schema, url, route }: { schema: RouteOptions['schema']; url: string; route: RouteOptions }) {
  const s: Record<string, unknown> = { ...(schema ?? {}) };
  const documented = route.config?.documentedBody;
  if (documented) {
    s.body = documented;
    s.consumes ??= ['multipart/form-data'];
  } else if (s.body && !s.consumes) s.consumes = FORM_TYPES;
  if (route.config?.action) documentAction(s);
  if (route.config?.public) s.security = [];
  else {
    if (route.config?.sessionOnly) documentSessionOnly(s);
    else {
      const v3 = speaksSendGrid(url);
      documentScope(s, route.config?.scope, v3);
      if ((Array.isArray(route.method) ? route.method : [route.method]).includes('POST')) documentIdempotency(s, v3);
    }
  }
  if (!s.tags) {
    const tag = tagOf(url);
    if (tag) s.tags = [tag];
  }
  return { schema: s, url };
}

/** A tag's name as a path segment: `Single sends` → `single-sends`. */
const tagSlug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '-');

interface OpenApiDocument {
  tags?: Array<{ name: string }>;
  paths?: Record<string, Record<string, { tags?: string[] }>>;
  [key: string]: unknown;
}

/** The document with only the operations of `tag` (and that tag), everything else as it is. */
function documentOfTag(doc: OpenApiDocument, tag: string): OpenApiDocument {
  const paths: NonNullable<OpenApiDocument['paths']> = {};
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const ops = Object.entries(item).filter(([, op]) => op.tags?.includes(tag));
    if (ops.length > 0) paths[path] = Object.fromEntries(ops);
  }
  return { ...doc, tags: doc.tags?.filter((t) => t.name === tag), paths };
}

/**
 * The OpenAPI 3.1 document at `GET /openapi.json`, generated from the route schemas (the ones
 * that validate requests and serialise responses, so it cannot drift from the code), and a
 * browsable reference at `/docs` (Swagger UI, served from its npm package: no CDN), one tag at a
 * time (`/docs/tags/<tag>`). All public.
 * Register before the routes: the generator collects them as they are added.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Campaign API',
        version: packageVersion(),
        description:
          'A self-hostable email campaign service. Requests send form fields (urlencoded or multipart; JSON with the ' +
          'same names works too); every answer is JSON in one envelope: `{"status":"success","message":…}` or ' +
          '`{"status":"failed","errors":…}`. Routes under `/v3/` speak SendGrid\'s v3 interface instead (JSON bodies, its ' +
          'statuses, failures as `{"errors":[{"message","field","help"}]}`). ' +
          KEYS_NOTE,
      },
      components: {
        securitySchemes: {
          PublicKey: { type: 'apiKey', in: 'header', name: 'PublicKey', description: "The account's public key (`pk_…`)." },
          SecretKey: { type: 'apiKey', in: 'header', name: 'SecretKey', description: "The account's secret key (`sk_…`); keep it secret." },
          Bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'The same key in one header, as SendGrid’s clients send theirs: `Authorization: Bearer <public key>.<secret key>` ' +
              '(`pk_….sk_…`); the same scopes, limits and audit as the two headers.',
          },
          Session: {
            type: 'apiKey',
            in: 'cookie',
            name: 'campaign_session',
            description:
              'A person signed in (`POST /session/sign-in`), instead of the keys, with the rights of their role; every request that ' +
              'is not GET or HEAD also carries the session’s `X-CSRF-Token`.',
          },
        },
      },
      security: [{ PublicKey: [], SecretKey: [] }, { Bearer: [] }, { Session: [] }],
      tags: TAGS.map(({ name, description }) => ({ name, description })),
    },
    transform: documentRoute,
  });

  app.get(
    '/openapi.json',
    {
      config: { public: true },
      schema: {
        summary: 'This OpenAPI 3.1 document',
        response: { 200: { description: 'The OpenAPI document of every route.', type: 'object', additionalProperties: true } },
      },
    },
    async () => app.swagger(),
  );

  await app.register(async (docs) => {
    // Swagger UI's own routes take no keys and do not count against the rate limit; its page
    // appears in the document, its assets do not.
    docs.addHook('onSend', async (_request, reply) => {
      reply.headers(DOCS_HEADERS);
    });
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, public: true };
      if (route.url === '/docs' && route.method === 'GET') {
        route.schema = {
          summary: 'This reference, browsable (Swagger UI)',
          response: {
            200: {
              description: 'The reference page; its scripts and styles are served from /docs/static/.',
              content: { 'text/html': { schema: { type: 'string' } } },
            },
          },
        };
      }
    });
    // One document per tag, chosen in the page's top bar: Swagger UI draws a whole document at
    // once, and the full one (over a hundred operations) stalled it after a few operations.
    docs.get('/docs/tags/:slug', { schema: { hide: true } }, async (request, reply) => {
      const tag = TAGS.find((t) => tagSlug(t.name) === (request.params as { slug: string }).slug);
      if (!tag) return reply.code(404).send({ status: 'failed', errors: 'Route not found' });
      return documentOfTag(app.swagger() as OpenApiDocument, tag.name);
    });
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: {
        deepLinking: true,
        // The first shown: Operations (health, metrics), then the tags in the document's order.
        urls: [...TAGS]
          .sort((a, b) => Number(b.name === 'Operations') - Number(a.name === 'Operations'))
          .map((t) => ({ name: t.name, url: `/docs/tags/${tagSlug(t.name)}` })),
      },
    });
  });
}
