/**
 * The trap link of a mail with tracked links: one more click link, hidden from people (no text or
 * image between its tags, `hidden`, `display:none`, `aria-hidden`, out of the tab order), so no
 * person can see or follow it. Security gateways and link checkers that follow every link of a
 * mail follow it too: a click on it shows a scanner (docs/engagement.md). Its href is the value of
 * key `TRAP_SLOT`, filled per recipient like the click slots.
 */
import type { Segments } from './render.js';

/** The value key of the trap link's URL. `#` keeps it out of reach of `((…))` tokens in designs. */
export const TRAP_SLOT = '#trap_link';

const BEFORE = '<a href="';
const AFTER =
  '" hidden aria-hidden="true" tabindex="-1" style="display:none!important;font-size:0;line-height:0;max-height:0;' +
  'max-width:0;opacity:0;overflow:hidden;mso-hide:all;"></a>';

/** Adds the trap link's slot (value key `TRAP_SLOT`) just before `</body>` (at the end when there is none). */
export function withTrapLinkSlot(seg: Segments): Segments {
  const lits = [...seg.lits];
  const keys = [...seg.keys];
  let i = lits.length - 1;
  let at = -1;
  for (; i >= 0; i--) {
    at = lits[i].toLowerCase().lastIndexOf('</body');
    if (at >= 0) break;
  }
  if (i < 0) {
    i = lits.length - 1;
    at = lits[i].length;
  }
  lits.splice(i, 1, lits[i].slice(0, at) + BEFORE, AFTER + lits[i].slice(at));
  keys.splice(i, 0, TRAP_SLOT);
  return { lits, keys };
}
