/**
 * The baselines of `bench:send`, with no database and no queue: the same messages built by the
 * same code as the worker's single-send renderer (`compileDesign` once, with click tracking,
 * `renderFor` per recipient, the same headers and tracking and click links) sent through the same SMTP transport (`smtpTransport`: the
 * same pool and settings) with the worker's concurrency; and the raw ceiling: one message's bytes,
 * built once, pushed through a nodemailer pool of the same size to every recipient.
 */
import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import { recipientValues, type RecipientInput } from '../../src/delivery/placeholders.js';
import { CLICK_SLOT, compileDesign, OPEN_PIXEL, renderFor } from '../../src/delivery/render.js';
import { trackingLinks } from '../../src/delivery/tracking.js';
import type { MailMessage } from '../../src/delivery/transport.js';
import { SMTP_POOL_CONNECTIONS, smtpTransport } from '../../src/delivery/transports.js';
import { DESIGN_HTML, PREHEADER, SEND_APP_SECRET, SEND_PUBLIC_URL, SUBJECT } from './sends.js';

const COUNTRIES = ['101', '231', '82', '75', '14', '39'];

/** Contact `i` as `seedContacts` generates it (the same values the worker reads from the database). */
function contact(i: number): RecipientInput {
  const custom = i % 3 === 0 ? `{"company_name":"Company ${i % 50}","age":"${20 + (i % 50)}"}` : null;
  return {
    first_name: `First${i}`,
    last_name: `Last${i}`,
    email: `contact${i}@bench.example.com`,
    alt_email: null,
    country: COUNTRIES[i % COUNTRIES.length],
    state: 'State',
    city: `City ${i % 100}`,
    address_line1: `${i} Bench Street`,
    address_line2: null,
    state_province_region: null,
    postal_code: String(10000 + (i % 90000)),
    // Parsed per recipient, as the renderer parses the stored text.
    custom: custom ? JSON.parse(custom) : null,
  };
}

/** Builds recipient `i`'s mail the way the single-send renderer does. */
async function messageBuilder(): Promise<(i: number) => MailMessage> {
  const design = await compileDesign({
    design: { templateId: 1, templateHtml: DESIGN_HTML },
    subject: SUBJECT,
    preheader: PREHEADER,
    footer: true,
    openPixel: true,
    trackClicks: true,
  });
  const links = trackingLinks({ appSecret: SEND_APP_SECRET, publicUrl: SEND_PUBLIC_URL });
  const host = new URL(SEND_PUBLIC_URL).hostname;
  const shared = { sender_name: 'Bench News', sender_address: '1 Bench Street, 10001, India' };
  return (i) => {
    const unsubscribeUrl = links.unsubscribeUrl(i + 1);
    const values: Record<string, string> = {
      ...recipientValues(contact(i)),
      unsubscribe_preferences: unsubscribeUrl,
      [OPEN_PIXEL]: links.openUrl(i + 1),
    };
    // The click slots, as the worker fills them (link ids 1, 2, 3).
    for (let l = 0; l < design.links.length; l++) values[CLICK_SLOT + l] = links.clickUrl(i + 1, l + 1);
    const { subject, html, text } = renderFor(design, values, shared);
    const mailto = `mailto:replies@bench.example.com?subject=${encodeURIComponent(`unsubscribe ${links.unsubscribeToken(i + 1)}`)}`;
    return {
      from: { name: 'Bench News', address: 'news@bench.example.com' },
      to: `contact${i}@bench.example.com`,
      replyTo: 'replies@bench.example.com',
      subject,
      html,
      text,
      messageId: `${randomUUID()}@${host}`,
      headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>, <${mailto}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    };
  };
}

/** Runs `send(i)` for i in [from, from + n) with `concurrency` at once; returns the milliseconds taken. */
async function pump(from: number, n: number, concurrency: number, send: (i: number) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  let next = from;
  const runner = async () => {
    while (next < from + n) await send(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, runner));
  return performance.now() - t0;
}

/** The baseline: the renderer's messages through the project's SMTP transport, no database, no queue. Returns ms. */
export async function sendBaseline(sinkUrl: string, from: number, n: number): Promise<number> {
  const build = await messageBuilder();
  const transport = smtpTransport(sinkUrl, null);
  try {
    return await pump(from, n, SMTP_POOL_CONNECTIONS, (i) => transport.send(build(i)));
  } finally {
    await transport.close();
  }
}

/** The raw ceiling: one message's bytes, built once, to every recipient through a pool of the same size. Returns ms. */
export async function sendRaw(sinkUrl: string, from: number, n: number): Promise<{ ms: number; bytes: number }> {
  const build = await messageBuilder();
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const m = build(from);
  const info = await composer.sendMail({ ...m, from: `"${'Bench News'}" <news@bench.example.com>`, messageId: `<${m.messageId}>` });
  const raw = info.message as Buffer;
  const mailer = nodemailer.createTransport({ url: sinkUrl, pool: true, maxConnections: SMTP_POOL_CONNECTIONS, maxMessages: 100 });
  try {
    const ms = await pump(from, n, SMTP_POOL_CONNECTIONS, (i) =>
      mailer.sendMail({ envelope: { from: 'news@bench.example.com', to: [`contact${i}@bench.example.com`] }, raw }),
    );
    return { ms, bytes: raw.length };
  } finally {
    mailer.close();
  }
}
