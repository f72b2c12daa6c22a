import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { AppDeps } from '../deps.js';
import { idleWait, type IdleWait } from './idle.js';

/** What the runner lends a lane while it works. */
export interface WorkContext {
  /** The runner's lease owner, written on the rows it claims. */
  readonly owner: string;
  /** Aborted when the runner stops: waits inside the work (a relay's slot) end at once. */
  readonly signal: AbortSignal;
  /** True once the runner stops: start nothing new. */
  stopping(): boolean;
  /** The item left the runner's hands (given to a server, or its outcome buffered): it is not released. */
  handedOver(id: number): void;
  /** The item went nowhere after all: it is released with the others not handed over. */
  giveBack(id: number): void;
}

/** How a lane holds its rows: every write guarded by the lease owner. */
export interface Leases<Item extends { id: number }> {
  /** Claims a batch of due items for `owner`, held until `now + leaseMs`. */
  claim(owner: string, now: Date, leaseMs: number): Promise<Item[]>;
  /** Pushes the lease of every item `owner` holds to `now + leaseMs` (a long batch keeps its rows). */
  renew(owner: string, now: Date, leaseMs: number): Promise<unknown>;
  /** Gives items back, due at once (claimed, never handed over). */
  release(owner: string, now: Date, ids: number[]): Promise<unknown>;
}

/**
 * A kind of background work the runner drives (graphile-worker's task list, grown into lanes that
 * claim in batches): how it claims, works and settles a batch, when it is next due, and the
 * PostgreSQL channel whose notifications say it may have work. The runner owns the rest.
 */
export interface Lane<Item extends { id: number } = { id: number }> {
  /** Its name in the log and in `Runner.lane(name)`. */
  readonly name: string;
  /** The channel that wakes it when idle; lanes of one channel also wake each other after doing work. */
  readonly channel: string | null;
  /** Its rows' leases; without them the lane claims nothing and `work` runs with no items. */
  readonly leases?: Leases<Item>;
  /** How long `stop()` waits for its work under way (default: the runner's `stopTimeoutMs`). */
  readonly stopWithinMs?: number;
  /** Fields of its "started" log line. */
  readonly startLog?: Record<string, unknown>;
  /**
   * Works a claimed batch, calling `ctx.handedOver` for each item that must not be released. A
   * lane without leases does its round instead and returns how much it did (a leased lane's
   * tick counts the items it claimed).
   */
  work(items: Item[], ctx: WorkContext): Promise<number | void>;
  /** Writes the outcomes it buffered; never rejects (a failed write keeps them for the next). */
  flush?(): Promise<void>;
  /** A tick that claimed nothing does this (housekeeping). */
  whenIdle?(now: Date): Promise<void>;
  /** When work comes due next (null: not known); an idle lane wakes then at the latest. */
  nextDueAt(now: Date): Promise<Date | null>;
  /** Frees what it holds (connections) once the runner stopped. */
  close?(): void | Promise<void>;
}

/** How a runner leases, waits and stops; every field has a default. */
export interface RunnerOptions {
  /** The lease owner written on claimed rows; unique per runner (default: host, pid and a random tag). */
  id?: string;
  /** How long a claim holds an item (default 60 s); renewed every third of it while the lane works. */
  leaseMs?: number;
  /** Idle wait between polls when no notification can wake a lane (SQLite; default 1 s); the first pause after a failed tick. */
  pollMs?: number;
  /** Longest idle wait on PostgreSQL while the listener hears notifications (default 30 s; a safety net). */
  idleMaxMs?: number;
  /** How long `stop()` waits for a lane's work under way (default 5 s), unless the lane says. */
  stopTimeoutMs?: number;
  /** Run each lane's loop in the background (default true); false: the caller drives `tick()` (tests). */
  loop?: boolean;
  /** The lanes `tick()` runs, in order, by name; a name may come twice (default: each lane once). */
  tickOrder?: string[];
}

/** One lane of a runner, driven by hand. */
export interface LaneHandle {
  readonly name: string;
  /** One round of the lane: claim, work, settle. Returns how many items it claimed (or did, without leases). */
  tick(): Promise<number>;
}

/** A running set of lanes. */
export interface Runner {
  readonly id: string;
  /** One round of every lane, in the tick order. Returns how many items the leased lanes claimed. */
  tick(): Promise<number>;
  /** The lane of that name (throws if there is none). */
  lane(name: string): LaneHandle;
  /** Stops claiming, lets the work under way finish (bounded), writes what is buffered, releases the rest. */
  stop(): Promise<void>;
}

/** An idle lane never polls faster: due rows held by another runner's lease must not spin it. */
const MIN_IDLE_MS = 50;
/** Failed ticks in a row after which the pause stops growing (1, 2, 4, 8 × pollMs). */
const BACKOFF_STEPS = 3;

/** A fresh lease owner name: readable in the table (host and pid), unique thanks to the tag. */
export function runnerName(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

interface LaneState {
  lane: Lane;
  idler: IdleWait;
  /** Claimed and not handed over: released after the batch, or on stop. */
  held: Set<number>;
  ctx: WorkContext;
  current: Promise<number> | null;
  looping: Promise<void> | null;
  tick(): Promise<number>;
}

/**
 * Starts the lanes on the app's database, clock and log. Each lane runs its own loop: a tick
 * claims a batch with a lease (renewed while the lane works), works it, writes the buffered
 * outcomes and releases what was not handed over; after a tick that did work the next runs at
 * once (and the other lanes of its channel are woken: on SQLite nothing else would); when idle
 * the lane waits for a notification on its channel (PostgreSQL, through the process's listener),
 * its next due time, or a poll interval; after a failed tick it pauses, longer at each failure in
 * a row. `stop()` waits (bounded) for the work under way. Schedules read `deps.clock`; the waits
 * themselves are real time.
 */
export function startRunner(deps: Pick<AppDeps, 'database' | 'clock' | 'log'>, lanes: Lane[], opts: RunnerOptions = {}): Runner {
  const id = opts.id ?? runnerName();
  const leaseMs = opts.leaseMs ?? 60_000;
  const pollMs = opts.pollMs ?? 1000;
  const idleMaxMs = opts.idleMaxMs ?? 30_000;
  const stopTimeoutMs = opts.stopTimeoutMs ?? 5000;
  const loop = opts.loop !== false;
  const { database, clock, log } = deps;
  const aborter = new AbortController();
  let stopping = false;

  const tickLane = async (s: LaneState): Promise<number> => {
    if (stopping) return 0;
    const { lane } = s;
    if (!lane.leases) return (await lane.work([], s.ctx)) ?? 0;
    const leases = lane.leases;
    const items = await leases.claim(id, clock.now(), leaseMs);
    if (items.length === 0) {
      await lane.whenIdle?.(clock.now());
      return 0;
    }
    for (const item of items) s.held.add(item.id);
    const renew = setInterval(() => {
      leases.renew(id, clock.now(), leaseMs).catch((err) => log.warn({ err, worker: id, lane: lane.name }, 'lease not renewed'));
    }, leaseMs / 3);
    renew.unref();
    try {
      await lane.work(items, s.ctx);
      await lane.flush?.();
      if (s.held.size > 0) await leases.release(id, clock.now(), [...s.held]);
      s.held.clear();
    } finally {
      clearInterval(renew);
    }
    return items.length;
  };

  const states: LaneState[] = lanes.map((lane) => {
    const held = new Set<number>();
    const s: LaneState = {
      lane,
      held,
      // Only a looping runner listens: a runner driven by hand must not hold a subscription.
      idler: idleWait(loop ? database.listener : null, lane.channel),
      ctx: {
        owner: id,
        signal: aborter.signal,
        stopping: () => stopping,
        handedOver: (itemId) => held.delete(itemId),
        giveBack: (itemId) => held.add(itemId),
      },
      current: null,
      looping: null,
      // One tick of a lane at a time: a tick asked for during another runs after it.
      tick: () => (s.current = (s.current ?? Promise.resolve(0)).catch(() => 0).then(() => tickLane(s))),
    };
    return s;
  });
  const byName = new Map(states.map((s) => [s.lane.name, s]));
  const stateOf = (name: string) => {
    const s = byName.get(name);
    if (!s) throw new Error(`job runner: no lane named ${name}`);
    return s;
  };
  const order = (opts.tickOrder ?? lanes.map((l) => l.name)).map(stateOf);

  const runLoop = async (s: LaneState) => {
    const { lane, idler } = s;
    let failures = 0;
    while (!stopping) {
      idler.reset();
      let done: number;
      try {
        done = await s.tick();
        failures = 0;
      } catch (err) {
        failures++;
        const pauseMs = Math.min(pollMs * 2 ** Math.min(failures - 1, BACKOFF_STEPS), Math.max(pollMs, idleMaxMs));
        log.error({ err, worker: id, lane: lane.name, failures, pauseMs }, `${lane.name} lane: tick failed; trying again after a pause`);
        await idler.pause(pauseMs);
        continue;
      }
      if (done > 0) {
        for (const other of states) if (other !== s && other.lane.channel === lane.channel) other.idler.nudge();
        continue;
      }
      let wait = lane.channel && database.listener?.isListening() ? idleMaxMs : pollMs;
      try {
        const due = await lane.nextDueAt(clock.now());
        if (due) wait = Math.min(wait, due.getTime() - clock.now().getTime());
      } catch (err) {
        log.warn({ err, worker: id, lane: lane.name }, `${lane.name} lane: next due time not read`);
      }
      await idler.wait(Math.max(MIN_IDLE_MS, wait));
    }
  };

  if (loop) {
    for (const s of states) {
      log.info({ worker: id, lane: s.lane.name, ...s.lane.startLog }, `${s.lane.name} lane started`);
      s.looping = runLoop(s);
    }
  }

  /** Waits (bounded) for the lane's work under way, writes its outcomes, releases what it holds. */
  const stopLane = async (s: LaneState) => {
    const running = (s.looping ?? s.current ?? Promise.resolve()).then(
      () => undefined,
      () => undefined,
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([running, new Promise<void>((r) => (timer = setTimeout(r, s.lane.stopWithinMs ?? stopTimeoutMs)))]);
    clearTimeout(timer);
    // Past the bound, items still with a server keep their lease and come back when it ends.
    await s.lane.flush?.().catch(() => undefined);
    if (s.lane.leases && s.held.size > 0) {
      await s.lane.leases
        .release(id, clock.now(), [...s.held])
        .catch((err) => log.warn({ err, worker: id, lane: s.lane.name }, 'leases not released'));
    }
    s.held.clear();
    await s.lane.close?.();
  };

  return {
    id,
    async tick() {
      let claimed = 0;
      for (const s of order) {
        const n = await s.tick();
        if (s.lane.leases) claimed += n;
      }
      return claimed;
    },
    lane(name) {
      const s = stateOf(name);
      return { name, tick: () => s.tick() };
    },
    async stop() {
      if (stopping) return;
      stopping = true;
      aborter.abort();
      for (const s of states) s.idler.stop();
      await Promise.all(states.map(stopLane));
      if (loop) log.info({ worker: id }, 'job runner stopped');
    },
  };
}
