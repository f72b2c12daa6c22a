/**
 * Every regular expression of the inbound code reads text anyone can send (a bounce to the SMTP
 * listener, a relay's payload), so each must run in linear time. Data-driven, so a pattern added
 * later is held to it too: every RegExp exported by a module of src/inbound (the bounce-text table
 * included) or by the classification of hard and soft (src/delivery/bounce-classes.ts), and every
 * regular expression literal written in one, each against 100 KB adversarial
 * texts built around its own words (long runs of blanks and line ends, `<a@b.cc>:`, repeated
 * `a@`, repeated partial matches).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, test } from 'node:test';
import ts from 'typescript';
import {
  BOUNCE_SENDER,
  BOUNCE_SUBJECT,
  BOUNCE_TEXTS,
  DELAY_SUBJECT,
  QUOTED_MESSAGE_ID,
  QUOTED_RETURN_PATH,
  QUOTED_TO,
  RECIPIENT_LINE,
  RETURNED_MESSAGE,
} from '../../src/inbound/bounce-texts.js';
import { parseInboundMail } from '../../src/inbound/parse.js';

const SRC = join(import.meta.dirname, '../../src/inbound');
/** The classification of hard and soft reads the server's answer too. */
const CLASSES = join(import.meta.dirname, '../../src/delivery/bounce-classes.ts');
const SIZE = 100 * 1024;
const LIMIT_MS = 100;

/** The regular expression literals written in a TypeScript file. */
function literalsIn(file: string): RegExp[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const found: RegExp[] = [];
  const visit = (node: ts.Node) => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const text = node.getText(source);
      const end = text.lastIndexOf('/');
      found.push(new RegExp(text.slice(1, end), text.slice(end + 1)));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The RegExps a module exports, directly or inside an exported table (an array of objects). */
function exportedPatterns(exports: Record<string, unknown>): RegExp[] {
  const found: RegExp[] = [];
  const collect = (value: unknown, depth: number) => {
    if (value instanceof RegExp) found.push(value);
    else if (depth < 3 && value !== null && typeof value === 'object') for (const v of Object.values(value)) collect(v, depth + 1);
  };
  collect(exports, 0);
  return found;
}

/** Every pattern of src/inbound and of the classification, once each, named by its file. */
async function inboundPatterns(): Promise<Array<{ file: string; re: RegExp }>> {
  const out = new Map<string, { file: string; re: RegExp }>();
  const paths = [
    ...readdirSync(SRC)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(SRC, f)),
    CLASSES,
  ];
  for (const path of paths) {
    const file = basename(path);
    const exported = exportedPatterns((await import(path)) as Record<string, unknown>);
    for (const re of [...exported, ...literalsIn(path)]) out.set(`${re.source}/${re.flags}`, { file, re });
  }
  return [...out.values()];
}

/** The words a pattern looks for: its runs of literal characters (escapes unescaped), so the texts reach past them. */
function wordsOf(re: RegExp): string[] {
  const literal = (source: string) =>
    source
      .replace(/\[(?:\\.|[^\]\\])*\]/g, '\0')
      .replace(/\\[sSdDwWbBnrt]/g, '\0')
      .replace(/\\(.)/g, '$1')
      .split(/[\0()[\]{}*+?|^$.]+/)
      .filter((w) => w.length >= 2);
  // Also with optional groups left out, so `The response (?:…)?was:` gives `The response was:`.
  return [...new Set([...literal(re.source), ...literal(re.source.replace(/\(\?:[^()]*\)\?/g, ''))])];
}

const FILLERS = [' ', '\n', '\r\n', ' \n', '\t', 'a@', '<a@', 'a', '.', '>', "'", '-'];
const STARTS = ['', '<', '<a@b.cc>:', '  a@b.cc'];

/** 100 KB texts: each start (and each word of the pattern), alone or before a line end, then a long run of a filler, or the two repeated. */
function* adversarialTexts(re: RegExp): Generator<[label: string, text: string]> {
  for (const word of [...STARTS, ...wordsOf(re)]) {
    for (const start of [word, `${word}\n`]) {
      for (const filler of FILLERS) {
        const run = filler.repeat(Math.ceil(SIZE / filler.length));
        // Ending in nothing, in a word, in a line end: each fails a different kind of pattern at the very end.
        for (const end of ['', 'x', '\n'])
          yield [`${JSON.stringify(start)} + ${JSON.stringify(filler)}… + ${JSON.stringify(end)}`, start + run + end];
        if (start !== '')
          yield [`(${JSON.stringify(start + filler)})…`, (start + filler).repeat(Math.ceil(SIZE / (start + filler).length))];
      }
    }
  }
}

/**
 * Milliseconds of CPU this process spends in `fn`: what a slow pattern costs the server, and
 * steadier than the wall clock on a machine that runs other work too.
 */
async function cpuMs(fn: () => unknown): Promise<number> {
  const started = process.cpuUsage();
  await fn();
  const { user, system } = process.cpuUsage(started);
  return (user + system) / 1000;
}

/** Applies `re` as the code does: every match of a global one, the first of another. */
function apply(re: RegExp, text: string): void {
  if (re.global) for (const m of text.matchAll(re)) void m;
  else re.exec(text);
}

describe('inbound regular expressions run in linear time', async () => {
  const patterns = await inboundPatterns();

  test('the scan finds the bounce-text table and the patterns written in the parser', () => {
    const sources = new Set(patterns.map((p) => p.re.source));
    for (const entry of BOUNCE_TEXTS)
      for (const re of [entry.detect, entry.recipient, entry.reason]) if (re) assert.ok(sources.has(re.source));
    for (const re of [
      QUOTED_MESSAGE_ID,
      QUOTED_RETURN_PATH,
      QUOTED_TO,
      RECIPIENT_LINE,
      RETURNED_MESSAGE,
      BOUNCE_SENDER,
      BOUNCE_SUBJECT,
      DELAY_SUBJECT,
    ])
      assert.ok(sources.has(re.source), re.source);
    assert.ok(patterns.filter((p) => p.file === 'parse.ts').length >= 5);
    assert.ok(patterns.filter((p) => p.file === 'text-bounce.ts').length >= 2);
    assert.ok(patterns.filter((p) => p.file === 'bounce-classes.ts').length >= 2);
  });

  for (const { file, re } of patterns) {
    test(`${file} ${re}: under ${LIMIT_MS} ms on every 100 KB adversarial text`, async () => {
      for (const [label, text] of adversarialTexts(re)) {
        let ms = await cpuMs(() => apply(re, text));
        // A second try absorbs a garbage collection; a super-linear pattern takes seconds on 100 KB, every time.
        if (ms >= LIMIT_MS) ms = Math.min(ms, await cpuMs(() => apply(re, text)));
        assert.ok(ms < LIMIT_MS, `${ms.toFixed(0)} ms on ${label}`);
      }
    });
  }
});

describe('a 100 KB bounce text built to be slow is read at once', () => {
  const tails: Array<[string, string]> = [
    ['100,000 spaces', ' '.repeat(100_000)],
    ['100,000 line ends', '\n'.repeat(100_000)],
    ['a line end, then 100,000 spaces and a word', `\n${' '.repeat(100_000)}x`],
    ['100,000 spaces and a word', `${' '.repeat(100_000)}x`],
    ['a@ 50,000 times', 'a@'.repeat(50_000)],
  ];
  const moreTails: Array<[string, string]> = [
    ...tails,
    ['100,000 letters', 'a'.repeat(100_000)],
    ['< 50,000 times', '<a'.repeat(50_000)],
    ['a line of an address and 50,000 more lines', `  a@b.cc:\n${'    x\n'.repeat(50_000)}`],
    ['50,000 lines that start with an address', 'a@b.cc: x\n'.repeat(50_000)],
    ['Final-Recipient 20,000 times', 'Final-Recipient: rfc822; a@b.cc\nAction: failed\n\n'.repeat(20_000)],
  ];
  test('the reader of any other bounce text (no system of its own): each adversarial tail, in under 500 ms', async () => {
    for (const [label, tail] of moreTails) {
      const raw = `From: MAILER-DAEMON@mail.example.org\r\nSubject: failure notice\r\nX-Failed-Recipients: a@b.cc\r\n\r\nThe following address failed:\n\n  a@b.cc:${tail}\n`;
      const ms = await cpuMs(() => parseInboundMail(raw));
      assert.ok(ms < 500, `${ms.toFixed(0)} ms with ${label}`);
    }
  });

  for (const entry of BOUNCE_TEXTS) {
    // The first phrase its `detect` looks for, so the text is taken for this system's.
    const phrase = wordsOf(entry.detect)[0];
    test(`${entry.system}: <a@b.cc>: then each adversarial tail, in under 500 ms`, async () => {
      assert.match(phrase, entry.detect);
      for (const [label, tail] of tails) {
        const raw = `From: MAILER-DAEMON@mail.example.org\r\nSubject: failure notice\r\n\r\n${phrase}\n\n<a@b.cc>:${tail}\n`;
        const ms = await cpuMs(() => parseInboundMail(raw));
        assert.ok(ms < 500, `${ms.toFixed(0)} ms with ${label}`);
      }
    });
  }
});
