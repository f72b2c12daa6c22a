import { readFileSync, writeFileSync } from 'node:fs';

/**
 * A process's memory from /proc/<pid>/status, in KiB: current RSS (VmRSS), peak RSS (VmHWM), and
 * the current RSS split into anonymous memory (RssAnon: heap, stacks) and mapped files (RssFile:
 * code, and a database file read through a memory map, which the kernel can drop).
 */
export function memoryOf(pid: number): { rssKb: number; peakKb: number; anonKb: number; fileKb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rssKb: kb('VmRSS'), peakKb: kb('VmHWM'), anonKb: kb('RssAnon'), fileKb: kb('RssFile') };
}

/**
 * Samples a process's memory every `everyMs` until `stop()`, which returns the largest anonymous
 * and mapped-file RSS seen (KiB). The kernel keeps a peak only for the total.
 */
export function sampleMemory(pid: number, everyMs = 5): { stop(): { maxAnonKb: number; maxFileKb: number } } {
  let maxAnonKb = 0;
  let maxFileKb = 0;
  const sample = () => {
    const m = memoryOf(pid);
    maxAnonKb = Math.max(maxAnonKb, m.anonKb);
    maxFileKb = Math.max(maxFileKb, m.fileKb);
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { maxAnonKb, maxFileKb };
    },
  };
}

/** A process's peak RSS (VmHWM) in KiB. */
export function peakRssKb(pid: number): number {
  return memoryOf(pid).peakKb;
}

/**
 * Resets the peak RSS to the current RSS (writes 5 to /proc/<pid>/clear_refs; Linux ≥ 4.0, same
 * user), so the next peak reading covers only what follows. False when the kernel refuses.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The median of the values (mean of the middle two for an even count). */
export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Runs `fn` `runs` times (sequentially) and returns each result and the median of `pick`. */
export async function medianOf<T>(
  runs: number,
  fn: (run: number) => Promise<T>,
  pick: (r: T) => number,
): Promise<{ results: T[]; median: number }> {
  const results: T[] = [];
  for (let i = 0; i < runs; i++) results.push(await fn(i));
  return { results, median: median(results.map(pick)) };
}

/** Milliseconds `fn` takes, with its result. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const t0 = process.hrtime.bigint();
  const result = await fn();
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, result };
}

/** A number with thousands separators and `digits` decimals. */
export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Bytes as `12.3 MiB`. */
export function fmtBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(u ? 1 : 0)} ${units[u]}`;
}

/**
 * Prints one figure beside its baseline and the ratio, aligned:
 * `details            12,345 req/s   baseline bare 20,000 req/s   ratio 0.62  (target ≥ 0.50 ✓)`.
 * `target` is the minimum ratio, checked when given. Returns the ratio.
 */
export function printFigure(
  label: string,
  value: number,
  baseline: { label: string; value: number },
  unit: string,
  target?: number,
): number {
  const ratio = value / baseline.value;
  const check = target === undefined ? '' : `  (target ≥ ${target.toFixed(2)} ${ratio >= target ? 'met' : 'MISSED'})`;
  console.log(
    `${label.padEnd(28)} ${fmt(value).padStart(10)} ${unit}   baseline ${baseline.label} ${fmt(baseline.value)} ${unit}   ratio ${ratio.toFixed(2)}${check}`,
  );
  return ratio;
}
