import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Db } from '../db/index.js';
import { compileDesign, renderFor, type CompiledDesign } from '../delivery/render.js';
import { Media } from '../http/schemas.js';
import { customFieldsByName } from '../modules/fields/fields.queries.js';
import { customSamples, PREVIEW_HEADERS, previewPage, SAMPLE_CONTACT, usesOtherNames } from './design-preview.page.js';
import { messagePage, sendPage } from './page.js';

const Html = (description: string) => Media('text/html', description);

const schema = {
  summary: 'The design preview page of an automation email',
  description:
    "The address in each automation email's `design_url`: the email as it will look, its sender, subject and body, with " +
    'sample values (a contact named Alex Sample) in place of the placeholders. The body is shown in a sandboxed frame where ' +
    'no script runs; the preview counts no open and unsubscribes no one.',
  params: Type.Object({ utr: Type.String({ maxLength: 100, description: "The email's `utr`." }) }),
  response: {
    200: Html('The preview page (or, for a design that cannot be rendered, a page saying so).'),
    404: Html('No such email: the address is wrong, or its automation was deleted.'),
  },
};

/** A utr as the service makes them (a random UUID); anything else is not looked up. */
const UTR = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The email a utr names, unless its automation is deleted. */
function findPreviewSchedule(db: Db, utr: string) {
  return db
    .selectFrom('automation_schedules as s')
    .innerJoin('automations as a', (j) => j.onRef('a.id', '=', 's.automation_id').onRef('a.user_id', '=', 's.user_id'))
    .select([
      's.user_id',
      's.from_sender',
      's.sender_name',
      's.sender_address',
      's.subject',
      's.template_id',
      's.template_json',
      's.template_html',
    ])
    .where('s.utr', '=', utr)
    .where('a.deleted_at', 'is', null)
    .executeTakeFirst();
}

/**
 * `GET /designs/<utr>`: the page an automation email's `design_url` names. Public: the utr, a
 * random UUID, is the credential, as for a shared document link. Nothing is counted or changed.
 */
export const designPreviewRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const db = app.deps.database.db;

  /** The sample contact's values, with a sample for each custom field the design uses (one query, only then). */
  async function samplesFor(userId: number, compiled: CompiledDesign) {
    if (!usesOtherNames(compiled.names)) return SAMPLE_CONTACT;
    return { ...SAMPLE_CONTACT, ...customSamples(compiled.names, await customFieldsByName(db, userId)) };
  }

  app.get('/designs/:utr', { schema, config: { public: true } }, async (req, reply) => {
    const utr = req.params.utr;
    const schedule = UTR.test(utr) ? await findPreviewSchedule(db, utr) : undefined;
    if (!schedule) {
      return sendPage(reply, 404, messagePage('Link not valid', 'This design link is not valid. The email may have been deleted.'));
    }
    let compiled: CompiledDesign;
    try {
      compiled = await compileDesign({
        design: { templateId: schedule.template_id, templateJson: schedule.template_json, templateHtml: schedule.template_html },
        subject: schedule.subject,
        footer: true,
        openPixel: false,
      });
    } catch (err) {
      // A stored design that no longer compiles: say so on the page, never a 500.
      req.log.warn({ err, utr }, 'design preview could not be rendered');
      return sendPage(
        reply,
        200,
        messagePage('Design cannot be shown', "This email's design cannot be shown: it is not valid. Edit the email to fix it."),
      );
    }
    // The footer as the mail will carry it; no open pixel, so looking counts no open.
    const shared = { sender_name: schedule.sender_name ?? '', sender_address: schedule.sender_address ?? '' };
    const rendered = renderFor(compiled, await samplesFor(schedule.user_id, compiled), shared);
    const page = previewPage({
      subject: rendered.subject,
      fromName: schedule.sender_name ?? '',
      fromAddress: schedule.from_sender,
      html: rendered.html,
    });
    return sendPage(reply, 200, page, PREVIEW_HEADERS);
  });
};
