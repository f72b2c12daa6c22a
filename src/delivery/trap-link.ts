/**
 * The trap link of a mail with tracked links: one more click link, hidden from people (no text or
 * image between its tags, `hidden`, `display:none`, `aria-hidden`, out of the tab order), so no
 * person can see or follow it. Security gateways and link checkers that follow every link of a
 * mail follow it too: a click on it shows a scanner (docs/engagement.md). Its href is the value of
 * key `TRAP_SLOT`, filled per recipient like the click slots; render.ts puts the slot before `</body>`.
 */

/** The value key of the trap link's URL. `#` keeps it out of reach of `((…))` tokens in designs. */
export const TRAP_SLOT = '#trap_link';

/** The trap link's markup before and after its URL: an empty anchor no person sees or reaches. */
export const TRAP_BEFORE = '<a href="';
export const TRAP_AFTER =
  '" hidden aria-hidden="true" tabindex="-1" style="display:none!important;font-size:0;line-height:0;max-height:0;' +
  'max-width:0;opacity:0;overflow:hidden;mso-hide:all;"></a>';
