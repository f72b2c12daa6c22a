/** The records the Segments section reads: pieces of the service's answers (see lib/types.ts). */
import type { Message } from '../../lib/api';

/** A member: a matched contact (`contact_id` set) or a recipient added by hand. */
export type Recipient = Message<'/segment/email/list'>['contactEmails'][number];

/** A reserved or custom field, as `/reserve-fields` and `/custom-fields` list them. */
export type FieldDef = Message<'/reserve-fields'>['reservedFields'][number] | Message<'/custom-fields'>['customFields'][number];
