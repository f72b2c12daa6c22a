import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its default export arrives wrapped under tsx's ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

interface Media {
  schema?: object;
}
interface Operation {
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
}

/** What the check needs of a response. */
export interface Answer {
  status: number;
  headers: Record<string, unknown>;
  rawPayload: Buffer;
}

/**
 * A copy of `schema` whose objects with declared `properties` accept no others, so a field the
 * document does not name (a streamed list item grown by a mapper, say) fails the check.
 */
function closeObjects(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closeObjects);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = closeObjects(v);
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

function mediaType(value: unknown): string {
  return String(value ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
}

function decoded(answer: Answer): Buffer {
  switch (String(answer.headers['content-encoding'] ?? '').toLowerCase()) {
    case 'gzip':
      return gunzipSync(answer.rawPayload);
    case 'br':
      return brotliDecompressSync(answer.rawPayload);
    case 'deflate':
      return inflateSync(answer.rawPayload);
    default:
      return answer.rawPayload;
  }
}

/**
 * Checks real responses against an OpenAPI document: the operation is found by path template and
 * method, the status must be documented, a JSON body must match the documented schema (objects
 * closed, see `closeObjects`), any other body must have a documented media type, and a response
 * documented without content must have no body.
 */
export class OpenApiCheck {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly statics = new Set<string>();
  private readonly templates: Array<{ path: string; re: RegExp }> = [];

  constructor(private readonly doc: OpenApiDocument) {
    addFormats(this.ajv);
    this.ajv.addFormat('binary', true);
    for (const path of Object.keys(doc.paths)) {
      if (!path.includes('{')) this.statics.add(path);
      else {
        const pattern = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+');
        this.templates.push({ path, re: new RegExp(`^${pattern}$`) });
      }
    }
  }

  /** The documented path a request URL falls on (static paths win over templates), if any. */
  pathOf(url: string): string | undefined {
    let path = url.split('?')[0].replace(/\/{2,}/g, '/');
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    if (this.statics.has(path)) return path;
    return this.templates.find((t) => t.re.test(path))?.path;
  }

  /** Fails (AssertionError) when the answer to `method url` is not what the document says. */
  check(method: string, url: string, answer: Answer): void {
    const path = this.pathOf(url);
    // Unknown paths and methods answer `Route not found` from the not-found handler, no route's.
    if (!path) return;
    const verb = method.toUpperCase() === 'HEAD' ? 'get' : method.toLowerCase();
    const operation = this.doc.paths[path][verb];
    if (!operation) return;
    const where = `${method.toUpperCase()} ${path} → ${answer.status}`;
    const response = operation.responses[String(answer.status)] ?? operation.responses.default;
    assert.ok(response, `${where}: status not documented (documented: ${Object.keys(operation.responses).join(', ')})`);
    if (method.toUpperCase() === 'HEAD') return;
    const body = decoded(answer);
    if (!response.content) {
      assert.equal(body.length, 0, `${where}: documented without a body, but one was sent`);
      return;
    }
    const type = mediaType(answer.headers['content-type']);
    const media = response.content[type];
    assert.ok(media, `${where}: content type ${type} not documented (documented: ${Object.keys(response.content).join(', ')})`);
    if (type !== 'application/json' || !media.schema) return;
    const key = `${verb} ${path} ${answer.status}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(closeObjects(media.schema) as object);
      this.compiled.set(key, validate);
    }
    const value: unknown = JSON.parse(body.toString('utf8'));
    if (!validate(value)) {
      const errors = this.ajv.errorsText(validate.errors, { separator: '\n  ' });
      assert.fail(`${where}: the body does not match the document:\n  ${errors}\n  body: ${body.toString('utf8').slice(0, 300)}`);
    }
  }
}
