/**
 * The service reads bounces and complaints as Sisimai, the reference bounce classifier, reads
 * them: every mail of test/inbound/corpus/sisimai (real bounces and complaints of the large mail
 * systems, from Sisimai's own test set) goes through Sisimai (one Perl process) and through the
 * parser the inbound route and the SMTP listener use, and the two readings are compared on the
 * recipient and on the class (hard, soft, complaint). The figures and every disagreement are
 * printed; docs/bounces.md says why the service's reading is right in each disagreement left.
 *
 * Needs Debian's libsisimai-perl. Without it the comparison is skipped, unless REQUIRE_SISIMAI=1
 * (CI), then it fails. The mails of corpus/sisimai/no-failure (delay warnings, an auto-reply,
 * DMARC failure reports) report no failure: the service must read each as `ignored`, with or
 * without Sisimai.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { parseInboundMail } from '../../src/inbound/parse.js';
import {
  CORPUS,
  compareCorpus,
  corpusFiles,
  describeAgreement,
  readWithSisimai,
  sisimaiInstalled,
  type Agreement,
} from './sisimai-compare.js';

const RECIPIENT_TARGET = 0.97;
const CLASS_TARGET = 0.93;
const NO_FAILURE = join(CORPUS, 'no-failure');

const installed = sisimaiInstalled();
const required = process.env.REQUIRE_SISIMAI === '1';
const skip =
  installed || required ? false : 'Sisimai is not installed (apt-get install libsisimai-perl); REQUIRE_SISIMAI=1 makes this a failure';

describe('bounces and complaints are read as Sisimai reads them', { skip }, () => {
  let compared: Agreement | undefined;
  /** The comparison, or a failure that says why there is none. */
  const agreement = (): Agreement => {
    assert.ok(compared, 'no comparison: perl cannot load Sisimai');
    return compared;
  };
  before(async () => {
    if (!installed) return;
    compared = await compareCorpus();
    console.log(describeAgreement(compared).join('\n'));
  });

  test('Sisimai is installed', () => {
    assert.ok(installed, 'REQUIRE_SISIMAI=1 but perl cannot load Sisimai: apt-get install libsisimai-perl');
  });

  test('the corpus holds at least 300 bounces and complaints that Sisimai reads', () => {
    assert.ok(agreement().compared.length >= 300, `${agreement().compared.length} compared`);
  });

  test(`the recipient agrees in at least ${RECIPIENT_TARGET * 100}% of them`, () => {
    const { recipientRate } = agreement();
    assert.ok(recipientRate >= RECIPIENT_TARGET, `recipient ${(recipientRate * 100).toFixed(1)}%`);
  });

  test(`the class (hard, soft, complaint) agrees in at least ${CLASS_TARGET * 100}% of them`, () => {
    const { classRate } = agreement();
    assert.ok(classRate >= CLASS_TARGET, `class ${(classRate * 100).toFixed(1)}%`);
  });
});

describe('mails that report no failure are ignored', () => {
  const files = readdirSync(NO_FAILURE)
    .filter((f) => f.endsWith('.eml'))
    .sort()
    .map((f) => join(NO_FAILURE, f));

  test('delay warnings, an auto-reply and DMARC failure reports: `ignored`, each', async () => {
    assert.ok(files.length > 0);
    const sisimai = installed ? readWithSisimai(files) : new Map();
    const lines: string[] = [];
    for (const file of files) {
      const report = await parseInboundMail(readFileSync(file));
      const name = file.slice(NO_FAILURE.length + 1);
      const theirs = sisimai.get(file);
      lines.push(`  ${name}: ${report.kind}; Sisimai: ${theirs ? `${theirs.reason ?? '-'} (${theirs.agent ?? '-'})` : 'not run'}`);
      assert.equal(report.kind, 'ignored', name);
    }
    console.log(`no failure (${files.length} mails):\n${lines.join('\n')}`);
  });

  test('the corpus and this set do not share a mail', () => {
    const names = new Set(corpusFiles().map((f) => f.slice(CORPUS.length + 1)));
    for (const file of files) assert.ok(!names.has(file.slice(NO_FAILURE.length + 1)));
  });
});
