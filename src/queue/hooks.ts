import type { MailKind } from '../db/types.js';
import type { QueueHooks, Renderer } from './queue.types.js';
import { renderSystemMail } from './system-render.js';
import { singleSendHooks } from '../modules/single-sends/single-sends.engine.js';

/** The renderer of a kind whose feature is not wired yet: nothing of that kind can be built, so it is cancelled. */
function notWired(kind: MailKind): Renderer {
  return async (_deps, rows) => rows.map(() => ({ skip: 'cancelled' as const, reason: `no renderer for ${kind} mail in this build` }));
}

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
      automation: notWired('automation'),
    },
    beforeClaim: singleSendHooks.beforeClaim,
    afterSettle: singleSendHooks.afterSettle,
    nextWakeAt: singleSendHooks.nextWakeAt,
  };
}
