/** The records the Contacts pages read, beyond lib/types.ts: pieces of the service's answers. */
import type { Answer, Message } from '../../lib/api';

/** A reserved or custom field (`/reserve-fields`, `/custom-fields`). */
export type FieldDefinition = Message<'/custom-fields'>['customFields'][number];

/** The row report of `POST /contacts/upload-csv`. */
export type ImportSummary = Answer<'/contacts/upload-csv', 'post'>['summary'];

/** `GET /contacts/export`: everything the account holds about an address. */
export type ContactExport = Message<'/contacts/export'>;

export type ExportedMessage = ContactExport['messages'][number];
