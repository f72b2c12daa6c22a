/**
 * The records the console reads, named: each one is a piece of an answer of the service's OpenAPI
 * document (generated into `api.gen.d.ts`), never a copy, so a changed schema shows up in the type
 * check of every page that reads it.
 */
import type { Message } from './api';

export type ContactType = Message<'/contacts-type'>['contactTypes'][number];

/** A contact with its custom values and contact type, as `/contacts/details` shows it. */
export type Contact = Message<'/contacts/details'>['contact'];

/** A contact as the list and the search show it: `country` is the country's name, and its contact type comes along. */
export type ContactListItem = Message<'/contacts/search'>['contacts'][number];

export type Country = Message<'/get/country-state-city'>['countries'][number];

/** The account's last days at a glance (`/account/overview`). */
export type Overview = Message<'/account/overview'>['overview'];

/** A sender identity, as `/senders` lists it. */
export type Sender = Message<'/senders'>['senders'][number];

/** An unsubscribe group, as `/unsubscribes-groups` lists it. */
export type UnsubscribeGroup = Message<'/unsubscribes-groups'>['unsubscribesGroups'][number];

/** A segment, as `/segment/list` lists it. */
export type Segment = Message<'/segment/list'>['segments'][number];

/** The figures of an automation's report (a single send's add its timeline and variants: single-sends/types.ts). */
export type Stats = Message<'/automations/stats'>['stats'];
