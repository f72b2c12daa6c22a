/**
 * What every public HTML page shares (unsubscribe and preferences, sender verification, design
 * preview): the security headers, the one function that sends a page with them, and the shell of
 * the plain pages. Every value from the database is escaped by the pages; the plain pages' only
 * style is one inline block allowed by its hash in the Content-Security-Policy, and no script may
 * run at all.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { escapeHtml } from '../delivery/placeholders.js';

const STYLE =
  'body{font-family:system-ui,-apple-system,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#222;line-height:1.5}' +
  'h1{font-size:1.4rem}fieldset{border:1px solid #ccc;border-radius:.4rem;margin:1rem 0;padding:.5rem 1rem}' +
  'label{display:flex;gap:.6rem;align-items:flex-start;padding:.5rem 0;font-size:1.05rem}' +
  'input[type=checkbox]{width:1.3rem;height:1.3rem;flex:none;margin-top:.15rem}' +
  'small{display:block;color:#555}.note{background:#eef7ee;border:1px solid #9c9;border-radius:.4rem;padding:.5rem 1rem}' +
  'button{font-size:1.05rem;padding:.6rem 1.4rem;border-radius:.4rem;border:1px solid #246;background:#246;color:#fff}';

/**
 * The security headers of a public page with the given Content-Security-Policy: never cached
 * (each answer is about one link's holder), never framed, no referrer (the URLs carry tokens), no
 * content-type sniffing.
 */
export function pageHeaders(contentSecurityPolicy: string): Readonly<Record<string, string>> {
  return Object.freeze({
    'Content-Security-Policy': contentSecurityPolicy,
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
  });
}

/** The headers of the plain pages: no script source at all, the one style by hash, forms posting only back to this server. */
export const PAGE_HEADERS = pageHeaders(
  `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; ` +
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
);

/** Sends an HTML page with its security headers (the plain pages' unless told). */
export function sendPage(reply: FastifyReply, status: number, body: string, headers: Readonly<Record<string, string>> = PAGE_HEADERS) {
  return reply.code(status).headers(headers).type('text/html; charset=utf-8').send(body);
}

/** A whole plain page around `body` (already escaped HTML), titled `title`. */
export function plainPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style>
</head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

/** A short plain page saying one thing (a confirmation, an invalid link, a bad form). */
export function messagePage(title: string, text: string): string {
  return plainPage(title, `<p>${escapeHtml(text)}</p>`);
}
