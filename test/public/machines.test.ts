/** Who made an open or a click, by agent and address (`src/public/machines.ts`), on its own. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { machineRules, parseAddressRanges } from '../../src/public/machines.js';

describe('machine rules', () => {
  const rules = machineRules(parseAddressRanges('17.58.0.0/16,US,US-CA,Cupertino,\n2620:149:a00::/48\n10.0.0.0/8\n10.1.0.0/16\n'));

  it('opens: missing, empty and Apple’s bare agent are machines’; Gmail’s and Yahoo’s proxies and mail clients are people’s', () => {
    for (const ua of [
      undefined,
      '',
      '  ',
      'Mozilla/5.0',
      'curl/8.5.0',
      'Mozilla/5.0 (compatible; BingPreview/1.0b)',
      'python-requests/2.31',
    ])
      assert.equal(rules.isMachineOpen(ua, '203.0.113.1'), true, String(ua));
    for (const ua of [
      'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
      'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html',
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
      'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17425; Pro)',
    ])
      assert.equal(rules.isMachineOpen(ua, '203.0.113.1'), false, ua);
  });

  it('opens from the ranges are machines’ (merged and overlapping ranges, IPv6, IPv4-mapped), others and garbage are not', () => {
    const ua = 'Thunderbird/128.0';
    for (const address of [
      '17.58.0.0',
      '17.58.255.255',
      '2620:149:a00::',
      '2620:149:a00:ffff::1',
      '::ffff:17.58.3.4',
      '10.1.2.3',
      '10.255.0.1',
    ])
      assert.equal(rules.isMachineOpen(ua, address), true, address);
    for (const address of ['17.57.255.255', '17.59.0.0', '2620:149:a01::', '11.0.0.0', 'not an address', ''])
      assert.equal(rules.isMachineOpen(ua, address), false, address);
  });

  it('clicks: only the agent decides here (missing, empty, a scanner’s)', () => {
    for (const ua of [undefined, '', 'Mozilla/5.0 (compatible; Barracuda Sentinel (EE))', 'Go-http-client/1.1'])
      assert.equal(rules.isScannerAgent(ua), true, String(ua));
    assert.equal(
      rules.isScannerAgent('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36'),
      false,
    );
  });

  it('a range file with a line that is no range is refused, naming the line', () => {
    assert.throws(() => parseAddressRanges('# ok\n17.58.0.0/16\nnot-a-range,US\n', 'ranges.csv'), /ranges\.csv, line 3: "not-a-range"/);
    assert.throws(() => parseAddressRanges('17.58.0.0/33\n'), /line 1/);
  });

  it('costs linear time on 100 KB adversarial agents and addresses', () => {
    const long = 'Mozilla/5.0 '.repeat(10_000);
    const started = process.hrtime.bigint();
    for (let i = 0; i < 50; i++) {
      rules.isMachineOpen(long, '1'.repeat(100_000));
      rules.isScannerAgent(`${'a'.repeat(100_000)}curl/`);
    }
    assert.ok(Number(process.hrtime.bigint() - started) / 1e6 < 1000);
  });
});
