import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { ContactConsentTable, SignupFormTable } from '../../db/types.js';
import { HeaderText, Int, ListOf, Nullable, PagingQuery, QueryIds, Success, Text, Timestamp } from '../../http/schemas.js';
import { embedHtml, subscribeUrl } from './forms.embed.js';

export type FormRow = Selectable<SignupFormTable>;
export type ConsentRow = Selectable<ContactConsentTable>;

/** Every parameter of create (update takes them all again, with `id`). */
const formFields = {
  name: Type.String({ minLength: 1, maxLength: 255, description: "The form's name (yours; not shown to people signing up)." }),
  // No range here: an unknown or out-of-range id is "The selected … is invalid.", decided in the service.
  contact_type_id: Int({ description: 'A live contact type of the account: confirmed sign-ups become its contacts.' }),
  fields: Type.Optional(
    Type.Array(Type.String({ maxLength: 64 }), {
      maxItems: 50,
      description:
        'The fields the form asks for, as `fields[0]`, `fields[1]`, …: reserved field names and the names of the account’s custom fields. ' +
        '`email` is always asked for (first), whether listed or not.',
    }),
  ),
  unsubscribe_group_id: Type.Optional(
    Int({ description: 'An unsubscribe group of the account: confirming takes the address off that group’s list.' }),
  ),
  sender_id: Int({ description: 'A verified sender of the account: the confirmation mail comes from it.' }),
  redirect_url: Type.Optional(
    Type.String({ maxLength: 2000, description: 'An `http` or `https` address people go to after confirming; else our own page.' }),
  ),
  confirmation_subject: Type.Optional(HeaderText(255)),
  confirmation_text: Type.Optional({
    ...Text(5000),
    description: "The confirmation mail's text; the link follows it. Default: a short request to confirm.",
  }),
};

export const CreateFormBody = Type.Object(formFields);
export const UpdateFormBody = Type.Object({ id: Int(), ...formFields });
export type FormInput = Static<typeof CreateFormBody>;
export const FormIdQuery = QueryIds('id');
export const ListFormsQuery = PagingQuery;

const NullableText = Nullable(Type.String());

/** What `toForm` returns. */
export const FormShape = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    name: Type.String(),
    contact_type_id: Type.Integer(),
    fields: Type.Array(Type.String(), { description: 'The fields asked for, `email` first.' }),
    unsubscribe_group_id: Nullable(Type.Integer()),
    sender_id: Type.Integer(),
    redirect_url: NullableText,
    confirmation_subject: { ...NullableText, description: 'Null: the default subject.' },
    confirmation_text: { ...NullableText, description: 'Null: the default text. The confirmation link follows it.' },
    subscribe_url: Type.String({ description: 'Where the form posts: `{PUBLIC_URL}/subscribe/<id>`.' }),
    embed_html: Type.String({
      description: 'An HTML form to paste into any page: a labelled input per field and a hidden anti-bot field.',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { description: 'A sign-up form: people who post it and confirm by mail become contacts of its contact type.' },
);

export const FormList = ListOf('forms', FormShape, "The account's sign-up forms, newest first.");
export const FormDetails = Success(Type.Object({ form: FormShape }), 'The form, with its HTML to embed.');
export const FormCreated = Type.Object(
  {
    status: Type.Literal('success'),
    message: Type.String(),
    id: Type.Integer({ description: "The new form's id." }),
    embed_html: Type.String({ description: 'The HTML form to paste into a page (as in details).' }),
  },
  { description: 'Created.' },
);

/** The stored field list. */
export function fieldsOf(row: Pick<FormRow, 'fields'>): string[] {
  try {
    const v = JSON.parse(row.fields) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : ['email'];
  } catch {
    return ['email'];
  }
}

/** The API shape of a form. */
export function toForm(row: FormRow, publicUrl: string) {
  return {
    id: row.id,
    user_id: row.user_id,
    name: row.name,
    contact_type_id: row.contact_type_id,
    fields: fieldsOf(row),
    unsubscribe_group_id: row.unsubscribe_group_id,
    sender_id: row.sender_id,
    redirect_url: row.redirect_url,
    confirmation_subject: row.confirmation_subject,
    confirmation_text: row.confirmation_text,
    subscribe_url: subscribeUrl(publicUrl, row.id),
    embed_html: embedHtml(publicUrl, row.id, fieldsOf(row)),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
export type Form = ReturnType<typeof toForm>;

/** The API shape of a consent record (read-only; part of a contact's data). */
export function toConsent(row: ConsentRow) {
  return {
    id: row.id,
    contact_id: row.contact_id,
    email: row.email_key,
    form_id: row.form_id,
    form_name: row.form_name,
    signed_up_at: row.signed_up_at,
    signup_ip: row.signup_ip,
    signup_user_agent: row.signup_user_agent,
    confirmed_at: row.confirmed_at,
    confirm_ip: row.confirm_ip,
    confirm_user_agent: row.confirm_user_agent,
    mail_subject: row.mail_subject,
    mail_text: row.mail_text,
  };
}
export type Consent = ReturnType<typeof toConsent>;
