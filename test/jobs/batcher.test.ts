/**
 * The group-commit batcher (src/jobs/batcher.ts): how batches start (`tick`: the next turn, gated
 * by announced items, at most `parallel` at once; `flush`: on flush() or when full), the order of
 * the writes, and what a failed write does (its callers rejected, or its items kept for the next).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { batcher, ItemFailed, type BatcherOptions } from '../../src/jobs/batcher.js';

/** Lets the batcher's scheduled work run (it starts batches on the next turn of the event loop). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A promise and the function that resolves it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

/** A request batcher of numbers that records each batch it writes. */
function recording(opts: Omit<BatcherOptions<number>, 'start' | 'onFailure'>) {
  const written: number[][] = [];
  const numbers = batcher<number>(
    async (batch) => {
      written.push(batch);
    },
    { start: 'tick', onFailure: 'reject', ...opts },
  );
  return { written, numbers };
}

describe('tick: batches for requests', () => {
  test('the items of one turn go together; those that come during a write go in the next; each caller gets its result after the write', async () => {
    const written: number[][] = [];
    const hold = gate();
    let committed = 0;
    const squares = batcher<number, number>(
      async (batch) => {
        written.push(batch);
        if (written.length === 1) await hold.opened;
        committed++;
        return batch.map((n) => n * n);
      },
      { start: 'tick', onFailure: 'reject' },
    );
    const answers: Array<[number, number]> = [];
    const ask = (n: number) => squares.add(n).then((r) => void answers.push([r, committed]));
    const first = [ask(1), ask(2)];
    await turn();
    const second = [ask(3), ask(4), ask(5)];
    await turn();
    assert.deepEqual(written, [[1, 2]], 'one write at a time');
    assert.deepEqual(answers, [], 'nobody answered before the commit');
    hold.open();
    await Promise.all([...first, ...second]);
    assert.deepEqual(written, [
      [1, 2],
      [3, 4, 5],
    ]);
    assert.deepEqual(answers, [
      [1, 1],
      [4, 1],
      [9, 2],
      [16, 2],
      [25, 2],
    ]);
  });

  test('at most `max` items a batch, in the order they came', async () => {
    const { written, numbers } = recording({ max: 2 });
    await Promise.all([1, 2, 3, 4, 5].map((n) => numbers.add(n)));
    assert.deepEqual(written, [[1, 2], [3, 4], [5]]);
  });

  test('a failed write rejects its own callers only; an ItemFailed result fails its item alone', async () => {
    let writes = 0;
    const checked = batcher<number, string>(
      async (batch) => {
        writes++;
        if (batch.includes(13)) throw new Error('unlucky batch');
        return batch.map((n) => (n < 0 ? new ItemFailed(new Error(`negative: ${n}`)) : `ok ${n}`));
      },
      { start: 'tick', onFailure: 'reject' },
    );
    const firstTurn = await Promise.allSettled([checked.add(1), checked.add(13)]);
    assert.deepEqual(
      firstTurn.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
      ['unlucky batch', 'unlucky batch'],
    );
    const secondTurn = await Promise.allSettled([checked.add(2), checked.add(-3), checked.add(4)]);
    assert.deepEqual(
      secondTurn.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
      ['ok 2', 'negative: -3', 'ok 4'],
    );
    assert.equal(writes, 2);
  });

  test('gated: a batch waits while announced items are still coming, then takes what came, at most `max` each', async () => {
    const { written, numbers } = recording({ max: 3, maxWaitMs: 60_000 });
    const first = numbers.expect();
    const second = numbers.expect();
    void numbers.add(1);
    first();
    first(); // A second call of the same announcement changes nothing.
    await turn();
    assert.deepEqual(written, [], 'an announced item is still coming');
    for (const n of [2, 3, 4]) void numbers.add(n);
    second();
    await turn();
    await turn();
    assert.deepEqual(written, [[1, 2, 3], [4]]);
  });

  test('gated: an announcement that never ends holds a batch back at most `maxWaitMs`', async () => {
    const { written, numbers } = recording({ maxWaitMs: 20 });
    numbers.expect(); // Never ended: a report whose reader hung.
    const started = performance.now();
    // The batcher's timer does not hold the process open; this one does, and fails the test if the batch never comes.
    let guard: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (guard = setTimeout(() => reject(new Error('no batch within 5 s')), 5000)));
    await Promise.race([Promise.all([numbers.add(1), numbers.add(2)]), late]);
    clearTimeout(guard);
    assert.ok(performance.now() - started >= 15, 'waited for the announced items first');
    assert.deepEqual(written, [[1, 2]]);
  });

  test('not gated: a batch starts at once; those that come while it is written go together, at most `parallel` at a time', async () => {
    const written: number[][] = [];
    const release: Array<() => void> = [];
    let writing = 0;
    let most = 0;
    const numbers = batcher<number>(
      async (batch) => {
        writing++;
        most = Math.max(most, writing);
        written.push(batch);
        await new Promise<void>((resolve) => release.push(resolve));
        writing--;
      },
      { start: 'tick', onFailure: 'reject', parallel: 2 },
    );
    const reading = numbers.expect();
    void numbers.add(1);
    await turn();
    assert.deepEqual(written, [[1]], 'not held up by an announcement without maxWaitMs');
    void numbers.add(2);
    await turn();
    for (const n of [3, 4, 5]) void numbers.add(n);
    await turn();
    assert.deepEqual(written, [[1], [2]], 'two batches at most at a time');
    release.shift()!();
    await turn();
    await turn();
    assert.deepEqual(written, [[1], [2], [3, 4, 5]]);
    while (release.length > 0) release.shift()!();
    reading();
    assert.equal(most, 2);
  });
});

describe('flush: batches for the lanes', () => {
  test('nothing is written before flush() or `full`; writes run one at a time, in order, each taking all that waits', async () => {
    const written: string[][] = [];
    const hold = gate();
    let writing = 0;
    const marks = batcher<string>(
      async (batch) => {
        writing++;
        assert.equal(writing, 1, 'one write at a time');
        written.push(batch);
        if (written.length === 1) await hold.opened;
        writing--;
      },
      { start: 'flush', onFailure: 'keep', full: (waiting) => waiting.filter((m) => m.startsWith('sent')).length >= 3 },
    );
    void marks.add('skip 1');
    void marks.add('sent 1');
    void marks.add('sent 2');
    await turn();
    assert.deepEqual(written, []);
    assert.equal(marks.size, 3);
    void marks.add('sent 3'); // full: a write starts by itself
    await turn();
    assert.deepEqual(written, [['skip 1', 'sent 1', 'sent 2', 'sent 3']]);
    void marks.add('sent 4');
    const second = marks.flush();
    const third = marks.flush();
    void marks.add('sent 5');
    await turn();
    assert.equal(written.length, 1, 'the next write waits for the one under way');
    hold.open();
    await second;
    // The second write took everything that waited when it started; the third found nothing.
    assert.deepEqual(written, [
      ['skip 1', 'sent 1', 'sent 2', 'sent 3'],
      ['sent 4', 'sent 5'],
    ]);
    await third;
    assert.equal(written.length, 2);
    assert.equal(marks.size, 0);
  });

  test('a failed write keeps its items, ahead of newer ones, for the next; parts already stored are not written again', async () => {
    const stored: string[] = [];
    const attempts: string[][] = [];
    let failNext = true;
    const marks = batcher<string>(
      async (batch, written) => {
        attempts.push(batch);
        // Stored in two parts, as the mail lane writes its skips, then its sent marks.
        const skips = batch.filter((m) => m.startsWith('skip'));
        stored.push(...skips);
        written(skips);
        if (failNext) {
          failNext = false;
          throw new Error('the database is away');
        }
        stored.push(...batch.filter((m) => !m.startsWith('skip')));
      },
      { start: 'flush', onFailure: 'keep' },
    );
    const settled: string[] = [];
    for (const m of ['skip 1', 'sent 1', 'sent 2']) void marks.add(m).then(() => settled.push(m));
    await marks.flush(); // Never rejects.
    assert.deepEqual(settled, ['skip 1'], 'only the stored part is settled');
    assert.equal(marks.size, 2);
    void marks.add('sent 3').then(() => settled.push('sent 3'));
    await marks.flush();
    assert.deepEqual(attempts, [
      ['skip 1', 'sent 1', 'sent 2'],
      ['sent 1', 'sent 2', 'sent 3'],
    ]);
    assert.deepEqual(stored, ['skip 1', 'sent 1', 'sent 2', 'sent 3']);
    assert.deepEqual(settled, ['skip 1', 'sent 1', 'sent 2', 'sent 3']);
  });
});
