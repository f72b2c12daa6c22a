/**
 * Generators of malformed requests for the fuzz test: every route's path with junk around it,
 * random methods and headers, bodies of every content type, broken percent-encodings.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';

export interface Route {
  method: string;
  path: string;
}

/** The registered routes, read from Fastify's own listing (`printRoutes({commonPrefix: false})`). */
export function routesOf(listing: string): Route[] {
  const routes: Route[] = [];
  const stack: string[] = [];
  for (const line of listing.split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+) \(([^)]+)\)$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    stack.length = depth;
    stack.push(m[2]);
    for (const method of m[3].split(', ')) routes.push({ method, path: stack.join('') });
  }
  return routes;
}

/** Names the routes read, and names that mean trouble. */
const FIELD_NAMES = [
  'id',
  'contact_id',
  'contact_type_id',
  'segment_id',
  'segment_recipient_id',
  'sender_id',
  'groupId',
  'unsubscribe_groups_id',
  'name',
  'email',
  'email_address',
  'email_owner',
  'first_name',
  'last_name',
  'country',
  'state',
  'city',
  'country_id',
  'state_id',
  'custom_field',
  'field_name',
  'field_type',
  'strIds',
  'page',
  'per_page',
  'segment_name',
  'select_field',
  'select_operator',
  'value',
  'query_type',
  'from_name',
  'from_email',
  'reply_to_email',
  'nickname',
  'company_address',
  'group_name',
  'description',
  'template_name',
  'html_code',
  'json_code',
  'preview_image',
  'is_display',
  'send_at',
  'birth_date',
  'age',
  'parameters',
  'sql',
  'file',
  'token',
  'toString',
  '__proto__',
  'constructor',
  'hasOwnProperty',
  '',
  ' ',
];

const FIELD_VALUES = [
  '1',
  '2',
  '3',
  '0',
  '-1',
  '1.5',
  '1e3',
  '99999999999999999999',
  'NaN',
  'true',
  'false',
  'null',
  '',
  ' ',
  'a@example.com',
  'not an email',
  'x'.repeat(300),
  '101',
  '4008',
  '2024-02-30',
  '2024-01-01T00:00:00Z',
  'text',
  'number',
  'date',
  'equals',
  'contains',
  'is_empty',
  'and',
  'or',
  '<b>html</b>',
  '{"a":1}',
  '[1,2]',
  'é😀',
  '\u0000',
  '%',
  '%zz',
  '%FF',
  '%E2%82',
  '\uFFFF',
  '\uD800',
];

/** A field name: known, with brackets (`a[b]`, `a[]`, `a[0]`), deep brackets, or huge. */
const fieldName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...FIELD_NAMES) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        fc.constantFrom(...FIELD_NAMES),
        fc.constantFrom('[]', '[0]', '[1]', '[x]', '[age]', '[__proto__]', '[toString]', '[-1]', '[99999]', '][', '['),
      )
      .map(([a, b]) => a + b),
  },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...FIELD_NAMES), fc.integer({ min: 3, max: 60 })).map(([a, n]) => a + '[b]'.repeat(n)) },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 60_000 }).map((n) => 'k'.repeat(n)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

const fieldValue = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...FIELD_VALUES) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);

const pairs = fc.array(fc.tuple(fieldName, fieldValue), { maxLength: 8 });

/** `%`-escapes what urlencoding needs, sometimes leaving broken escapes in. */
function encode(s: string, broken: boolean): string {
  // A lone surrogate has no UTF-8 form: send the bytes a careless client would.
  const whole = s.replace(/[\uD800-\uDFFF]/g, '\uFFFD');
  return broken ? whole.replace(/[&=#\s]/g, encodeURIComponent) : encodeURIComponent(whole);
}

const urlencoded = fc
  .tuple(pairs, fc.boolean())
  .map(([p, broken]) => p.map(([k, v]) => `${encode(k, broken)}=${encode(v, broken)}`).join('&'));

/** A JSON value where a scalar, an array or an object may stand anywhere, sometimes deep. */
const jsonValue = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...FIELD_VALUES),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fieldName.filter((n) => n.length < 100),
      tie('value'),
      { maxKeys: 4 },
    ),
  ),
})).value;

const jsonBody = fc.oneof(
  { weight: 4, arbitrary: fc.dictionary(fc.constantFrom(...FIELD_NAMES), jsonValue, { maxKeys: 6 }).map((o) => JSON.stringify(o)) },
  { weight: 1, arbitrary: jsonValue.map((v) => JSON.stringify(v) ?? '') },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 3000 }).map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{',
      '{"a":}',
      '[1,',
      '"\\ud800"',
      '{"__proto__":{"x":1}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '\uFEFF{}',
      'nul',
    ),
  },
);

/** A multipart body with boundary `b`, sometimes with a file part, sometimes broken. */
const multipart = fc
  .record({
    fields: pairs,
    file: fc.option(
      fc.tuple(
        fc.constantFrom('file', 'other'),
        fc.constantFrom('c.csv', 'c.txt', '', 'a"b.csv'),
        fc.constantFrom('email,country\na@example.com,101\n', 'email\n', '\u0000\u0001', '"unterminated'),
      ),
      { nil: undefined },
    ),
    cut: fc.option(fc.nat(400), { nil: undefined }),
    close: fc.boolean(),
  })
  .map(({ fields, file, cut, close }) => {
    let body = fields.map(([k, v]) => `--b\r\nContent-Disposition: form-data; name="${k.slice(0, 2000)}"\r\n\r\n${v}\r\n`).join('');
    if (file)
      body += `--b\r\nContent-Disposition: form-data; name="${file[0]}"; filename="${file[1]}"\r\nContent-Type: text/csv\r\n\r\n${file[2]}\r\n`;
    if (close) body += '--b--\r\n';
    return cut === undefined ? body : body.slice(0, cut);
  });

/** Bytes that are not UTF-8. */
const invalidUtf8 = fc
  .uint8Array({ maxLength: 200 })
  .map((a) => Buffer.concat([Buffer.from('name='), Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from(a)]));

const CONTENT_TYPES = {
  urlencoded: [
    'application/x-www-form-urlencoded',
    'application/x-www-form-urlencoded; charset=utf-8',
    'application/x-www-form-urlencoded; charset=latin1',
  ],
  json: [
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=utf-16',
    'application/vnd.api+json',
    'APPLICATION/JSON',
  ],
  multipart: [
    'multipart/form-data; boundary=b',
    'multipart/form-data; boundary="b"',
    'multipart/form-data',
    'multipart/form-data; boundary=',
    'multipart/form-data; boundary=other',
    `multipart/form-data; boundary=${'b'.repeat(300)}`,
    'multipart/mixed; boundary=b',
  ],
  other: ['text/plain', 'application/xml', 'application/octet-stream', '', ';', 'application/json;', 'a/b; c', '*/*'],
};

/** A body and the content type it is sent with (not always the one it is written in). */
const body = fc.oneof(
  fc.record({ payload: urlencoded, type: fc.constantFrom(...CONTENT_TYPES.urlencoded, ...CONTENT_TYPES.other) }),
  fc.record({ payload: jsonBody, type: fc.constantFrom(...CONTENT_TYPES.json, ...CONTENT_TYPES.urlencoded) }),
  fc.record({ payload: multipart, type: fc.constantFrom(...CONTENT_TYPES.multipart) }),
  fc.record({
    payload: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
    type: fc.constantFrom(...Object.values(CONTENT_TYPES).flat()),
  }),
  fc.record({
    payload: invalidUtf8,
    type: fc.constantFrom(...CONTENT_TYPES.urlencoded, ...CONTENT_TYPES.json, ...CONTENT_TYPES.multipart),
  }),
  fc.record({ payload: fc.constant(undefined), type: fc.constantFrom(undefined, ...CONTENT_TYPES.json) }),
);

/** A query string: fields as pairs, sometimes with broken escapes or junk. */
const query = fc.oneof(
  { weight: 4, arbitrary: urlencoded },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '%',
      '%zz=1',
      'a=%FF',
      '&&&',
      '==',
      'a[=1',
      'a]]=1',
      '?',
      '#frag',
      'a=1&a[b]=2',
      'a[b]=1&a=2',
      'page=1&page=2',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((s) => s.replace(/[#\s]/g, '')) },
);

const JUNK_PATHS = [
  '/',
  '/x',
  '//',
  '/contacts/',
  '/contacts//list',
  '/%',
  '/%zz',
  '/%FF',
  '/contacts%2Flist',
  '/..%2f..%2fetc/passwd',
  '/images/templates/..%2F..%2Fpackage.json',
  '/images/templates/%00',
  '/contacts-type/%E2%82',
];

/** A request as `app.inject` takes it, headers a flat object (no duplicates: see the socket part). */
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/** Header names and values that change how a request is read. */
const extraHeaders = fc.dictionary(
  fc.constantFrom(
    'accept',
    'accept-encoding',
    'if-none-match',
    'x-forwarded-for',
    'x-forwarded-proto',
    'range',
    'origin',
    'content-encoding',
    'x-junk',
    'cookie',
  ),
  fc.constantFrom(
    '*',
    'gzip',
    'br, gzip;q=0',
    'identity;q=0',
    '"x"',
    'W/"x"',
    'bytes=0-1',
    '1.2.3.4, ::1, junk',
    'https',
    'null',
    'gzip, deflate',
    'a=b; c',
  ),
  { maxKeys: 3 },
);

/**
 * A request to a registered route (mostly its own method, sometimes another) or a junk path,
 * with keys (`keys`: valid ones mostly, else missing, wrong or empty), a query and a body.
 */
export function fuzzRequest(routes: Route[], keys: { publickey: string; secretkey: string }): fc.Arbitrary<FuzzRequest> {
  const target = fc.oneof(
    {
      weight: 9,
      arbitrary: fc.constantFrom(...routes).map((r) => ({ method: r.method, path: r.path.replace(':file', 'x.png').replace('*', 'x') })),
    },
    {
      weight: 1,
      arbitrary: fc.record({ method: fc.constantFrom(...METHODS), path: fc.constantFrom(...JUNK_PATHS, ...routes.map((r) => r.path)) }),
    },
  );
  const auth = fc.oneof(
    { weight: 12, arbitrary: fc.constant({ ...keys }) },
    { weight: 1, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: fc.constant({ publickey: keys.publickey, secretkey: 'sk_wrong' }) },
    {
      weight: 1,
      arbitrary: fc.record({
        publickey: fc.constantFrom('', ' ', 'pk_x', keys.publickey + 'x'),
        secretkey: fc.constantFrom('', keys.secretkey, 'x'.repeat(5000)),
      }),
    },
  );
  return fc
    .record({
      target,
      auth,
      query: fc.option(query, { nil: undefined }),
      body,
      extra: extraHeaders,
      expect: fc.constantFrom(undefined, undefined, undefined, '100-continue', 'junk'),
    })
    .map(({ target, auth, query, body, extra, expect }) => {
      const headers: Record<string, string> = { ...extra, ...auth };
      if (body.type !== undefined) headers['content-type'] = body.type;
      if (expect) headers.expect = expect;
      // Fastify reads no body on GET and HEAD: send one anyway at times, it must be ignored.
      return { method: target.method, url: target.path + (query === undefined ? '' : '?' + query), headers, payload: body.payload };
    });
}

/** What to print when a request fails: enough to replay it. */
export function describeRequest(r: FuzzRequest): string {
  const payload =
    r.payload === undefined
      ? ''
      : Buffer.isBuffer(r.payload)
        ? `<bytes ${r.payload.toString('hex').slice(0, 400)}>`
        : JSON.stringify(r.payload.slice(0, 400));
  return `${r.method} ${r.url.slice(0, 400)}\n  headers ${JSON.stringify(r.headers).slice(0, 400)}\n  body ${payload}`;
}

/**
 * Operations routes whose success bodies are not the API envelope (health checks, the OpenAPI
 * document and its copy under /docs). A raw request is described as quoted text, hence the `"`.
 */
const OWN_SHAPE = /^"?[A-Z]+ \/(health\/|openapi\.json|docs\/)/;

/** Routes that answer in SendGrid's v3 shapes (bodies and errors), not the envelope. */
const SENDGRID_SHAPE = /^"?[A-Z]+ \/v3\//;

/** The answers to a request Node's HTTP parser refuses (no route is known yet, so no /v3/ shape). */
const BEFORE_ANY_ROUTE = ['The request is not valid HTTP.', 'The request headers are too large.', 'The request took too long to arrive.'];

/**
 * Checks one answer: never a 5xx, and a JSON answer is always the envelope (but operations
 * routes' successes, and SendGrid's shapes under /v3/). `cause`, what the app logged last, is printed with a failure.
 */
export function checkAnswer(status: number, contentType: string | undefined, text: string, request: string, cause?: string): void {
  assert.ok(status < 500, `answered ${status} ${text.slice(0, 200)} to:\n${request}\nlogged: ${cause?.slice(0, 1500)}`);
  if (status < 400 && OWN_SHAPE.test(request)) return;
  if (contentType?.startsWith('application/json') && text !== '' && SENDGRID_SHAPE.test(request)) {
    // Routes under /v3/ speak SendGrid's shapes: a failure is its list of errors.
    const body = JSON.parse(text);
    // What Node's HTTP parser refuses is answered on the socket before any route is known: the envelope.
    if (status >= 400 && !BEFORE_ANY_ROUTE.includes(body?.errors))
      assert.ok(
        Array.isArray(body?.errors) && body.errors.every((e: { message?: unknown }) => typeof e.message === 'string'),
        `not SendGrid's error list: ${text.slice(0, 200)} to:\n${request}`,
      );
    return;
  }
  if (contentType?.startsWith('application/json') && text !== '') {
    const body = JSON.parse(text);
    assert.ok(['success', 'failed'].includes(body?.status), `not the envelope: ${text.slice(0, 200)} to:\n${request}`);
  }
}
