import type { AppDeps } from '../deps.js';
import type { QueueHooks } from './queue.types.js';
import { renderSystemMail } from './system-render.js';
import { singleSendHooks } from '../modules/single-sends/single-sends.engine.js';
import { automationHooks } from '../modules/automations/automations.engine.js';

/** The earlier of two times (null: none). */
const earliest = (a: Date | null, b: Date | null) => (a && b ? (a < b ? a : b) : (a ?? b));

/**
 * What the process's queue workers are given: a renderer per kind of mail and the hooks of the
 * features around the claim. The one place that wires features into the queue; the server
 * (`main.ts`), the worker process (`worker.ts`) and the tests use it.
 */
export function queueHooks(): QueueHooks {
  return {
    renderers: {
      system: renderSystemMail,
      single_send: singleSendHooks.renderer,
      automation: automationHooks.renderer,
    },
    beforeClaim: async (deps: AppDeps, now: Date) => {
      await singleSendHooks.beforeClaim(deps, now);
      await automationHooks.beforeClaim(deps, now);
    },
    afterSettle: singleSendHooks.afterSettle,
    nextWakeAt: async (deps: AppDeps) => earliest(await singleSendHooks.nextWakeAt(deps), await automationHooks.nextWakeAt(deps)),
  };
}
