import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ok } from '../../http/envelope.js';
import { schemaErrors } from '../../http/error-handler.js';
import { sendList } from '../../http/list.js';
import { StatsAnswer } from '../../delivery/statistics.js';
import { OkText, responses, StrUtrs } from '../../http/schemas.js';
import {
  AutomationDetails,
  AutomationList,
  CreateAutomationBody,
  CreateScheduleBody,
  ListAutomationsQuery,
  ScheduleAdded,
  ScheduleList,
  SetLiveRefused,
  UpdateAutomationBody,
  UtrAnswer,
  UtrQuery,
} from './automations.schema.js';
import {
  addSchedule,
  createAutomation,
  deleteAutomations,
  duplicateAutomation,
  getAutomation,
  getAutomationStats,
  listAutomations,
  listSchedules,
  pauseAutomation,
  removeSchedule,
  setAutomationLive,
  updateAutomation,
} from './automations.service.js';

/** `/automations/…` endpoints: automations and their emails (schedules), each named by its `utr`. */
export const automationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { deps } = app;

  app.get(
    '/automations',
    {
      config: { scope: 'automations.read' },
      schema: {
        summary: 'List automations',
        querystring: ListAutomationsQuery,
        response: responses(AutomationList, 422),
      },
    },
    (req, reply) => sendList(reply, 'automations', req.query, listAutomations(deps, req.userId)),
  );

  app.post(
    '/automations/create',
    {
      schema: {
        summary: 'Create an automation (a draft)',
        description:
          '`type` `welcome` (automation_type 1: contacts who join the target after it goes live) or `custom` (2: every member at ' +
          'go-live, and later joiners). Saved as a draft (status 0): add emails, then set it live.',
        body: CreateAutomationBody,
        response: responses(UtrAnswer('Saved as a draft (status 0).'), 422),
      },
      config: { scope: 'automations.write', deferValidation: true },
    },
    async (req) => ok({ utr: await createAutomation(deps, req.userId, req.body, schemaErrors(req)) }),
  );

  app.post(
    '/automations/update',
    {
      schema: {
        summary: "Change an automation's name, target, group or exit rule",
        description:
          'The fields as create takes them, with the same rules (`type` cannot change; `exit_criteria` left out stays). Status, ' +
          'emails and statistics stay. Only a draft or paused automation can change its target: a live one answers 409. A paused ' +
          "one enrols the new target's members at once, as going live does. Not found: `Record not found`.",
        body: UpdateAutomationBody,
        response: responses(OkText, 404, 409, 422),
      },
      config: { scope: 'automations.write', deferValidation: true },
    },
    async (req) => {
      await updateAutomation(deps, req.userId, req.body, schemaErrors(req));
      return ok('Updated Successfully');
    },
  );

  app.get(
    '/automations/duplicate',
    {
      config: { scope: 'automations.write', action: true },
      // A GET that changes state: no implicit HEAD route, so a HEAD (a prefetcher, a link checker) changes nothing.
      exposeHeadRoute: false,
      schema: {
        summary: 'Duplicate an automation (as a draft)',
        description: 'A draft named `<name> (copy)` with a copy of every email, zero statistics and `live_at` null.',
        querystring: UtrQuery,
        response: responses(UtrAnswer("Copied; the copy's utr."), 404, 422),
      },
    },
    async (req) => ok({ utr: await duplicateAutomation(deps, req.userId, req.query.utr) }),
  );

  app.get(
    '/automations/details',
    {
      config: { scope: 'automations.read' },
      schema: {
        summary: 'View an automation',
        description: 'Not found: `Record Not Found`.',
        querystring: UtrQuery,
        response: responses(AutomationDetails, 404, 422),
      },
    },
    async (req) => ok({ automation: await getAutomation(deps, req.userId, req.query.utr) }),
  );

  app.get(
    '/automations/stats',
    {
      config: { scope: 'automations.read' },
      schema: {
        summary: "An automation's detailed statistics",
        description:
          'Over all its emails: its totals (with hard and soft bounces, clicks and spam reports), every tracked link of its emails ' +
          'with its clicks, per UTC hour the messages delivered, opens and clicks, and the opens by people, machine opens and ' +
          'scanner clicks (docs/engagement.md). Not found: `Record not found`.',
        querystring: UtrQuery,
        response: responses(StatsAnswer, 404, 422),
      },
    },
    async (req) => ok({ stats: await getAutomationStats(deps, req.userId, req.query.utr) }),
  );

  app.get(
    '/automations/pause',
    {
      config: { scope: 'automations.write', action: true },
      // A GET that changes state: no implicit HEAD route, so a HEAD (a prefetcher, a link checker) changes nothing.
      exposeHeadRoute: false,
      schema: {
        summary: 'Pause a live automation',
        description:
          'Status 0 again, `live_at` kept; emails falling due wait and go out when it is set live again. ' +
          'Only a live automation can be paused: anything else is `Record not found`.',
        querystring: UtrQuery,
        response: responses(OkText, 404, 422),
      },
    },
    async (req) => {
      await pauseAutomation(deps, req.userId, req.query.utr);
      return ok('Automation Paused Successfully');
    },
  );

  app.get(
    '/automations/set-live',
    {
      config: { scope: 'automations.write', action: true },
      // A GET that changes state: no implicit HEAD route, so a HEAD (a prefetcher, a link checker) changes nothing.
      exposeHeadRoute: false,
      schema: {
        summary: 'Set an automation live',
        description:
          'Needs a live unsubscribe group, at least one email and a live target (422 with a text otherwise). ' +
          '`live_at` is filled the first time only. Setting a live automation live again succeeds and changes nothing.',
        querystring: UtrQuery,
        response: { ...responses(OkText, 404), 422: SetLiveRefused },
      },
    },
    async (req) => {
      await setAutomationLive(deps, req.userId, req.query.utr);
      return ok('Automation has been set live');
    },
  );

  app.delete(
    '/automations/delete',
    {
      config: { scope: 'automations.write' },
      schema: {
        summary: 'Delete an automation',
        description: 'Its emails stop: messages not yet sent are not sent.',
        querystring: UtrQuery,
        response: responses(OkText, 404, 422),
      },
    },
    async (req) => {
      await deleteAutomations(deps, req.userId, [req.query.utr]);
      return ok('Deleted Successfully');
    },
  );

  app.post(
    '/automations/bulk-delete',
    {
      config: { scope: 'automations.write' },
      schema: {
        summary: 'Delete several automations',
        description: '`strIds` holds utrs. Unknown ones are ignored; 404 only when none was deleted.',
        body: StrUtrs,
        response: responses(OkText, 404, 422),
      },
    },
    async (req) => {
      await deleteAutomations(deps, req.userId, req.body.strIds);
      return ok('Deleted Successfully');
    },
  );

  app.get(
    '/automations/schedule',
    {
      config: { scope: 'automations.read' },
      schema: {
        summary: "List an automation's emails",
        description: "`utr` is the automation's. The emails come in the order they run: creation order.",
        querystring: UtrQuery,
        response: responses(ScheduleList, 404, 422),
      },
    },
    async (req) => ok({ automation_schedules: await listSchedules(deps, req.userId, req.query.utr) }),
  );

  app.post(
    '/automations/schedule/create',
    {
      schema: {
        summary: 'Add an email to an automation',
        description:
          "The email runs after the automation's existing ones, `waiting_period` `waiting_type` after the previous one " +
          '(`instantly`: no wait). It can be added to a draft, live or paused automation. The sender must be verified.',
        body: CreateScheduleBody,
        response: responses(ScheduleAdded, 404, 422),
      },
      config: { scope: 'automations.write', deferValidation: true },
    },
    async (req) => ok('Schedule Added', await addSchedule(deps, req.userId, req.body, schemaErrors(req))),
  );

  app.delete(
    '/automations/schedule/delete',
    {
      config: { scope: 'automations.write' },
      schema: {
        summary: 'Delete an email of an automation',
        description: "`utr` is the email's (from the schedule list). Contacts waiting for it wait for the next one.",
        querystring: UtrQuery,
        response: responses(OkText, 404, 422),
      },
    },
    async (req) => {
      await removeSchedule(deps, req.userId, req.query.utr);
      return ok('Deleted Successfully');
    },
  );
};
