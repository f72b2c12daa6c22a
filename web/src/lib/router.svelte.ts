/**
 * A small history router: the console's pages live under /app/ (the server answers index.html for
 * any of them), links are ordinary `<a href>`s, and a click on one inside the console changes the
 * page without a reload.
 */
export const BASE = '/app';

/** The current path below /app, e.g. `/contacts/12`, and its query. */
export const route = $state({ path: pathOf(location.pathname), search: location.search });

function pathOf(pathname: string): string {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  return rest.replace(/\/+$/, '') || '/';
}

/** The address of a console page, for `href`s: `href('/contacts')` → `/app/contacts`. */
export function href(path: string): string {
  return BASE + path;
}

/**
 * What the page being left says about it: given the address asked for (`/app/…`), true when the
 * page keeps the reader (it has unsaved work and asks first, inline). One at a time: the page shown.
 */
type LeaveGuard = (to: string) => boolean;
let guard: LeaveGuard | null = null;
/** The address shown now, to come back to when a Back press is held by the guard. */
let shown = location.pathname + location.search;

/** Lets the page ask before it is left for another console page; returns the function that stops asking. */
export function guardLeaving(check: LeaveGuard): () => void {
  guard = check;
  return () => {
    if (guard === check) guard = null;
  };
}

/** Whether the page shown holds the reader on the way to `to`. */
const held = (to: string) => to !== shown && guard !== null && guard(to);

/** Goes to a console page (`/contacts/12`), adding it to the history; `force` leaves even a page with unsaved work. */
export function navigate(path: string, force = false): void {
  if (!force && held(href(path))) return;
  history.pushState(null, '', href(path));
  sync();
}

/** Gives the page shown a new address (a new design once saved) without going anywhere: no new page, no history entry. */
export function renameAddress(path: string): void {
  history.replaceState(null, '', href(path));
  shown = location.pathname + location.search;
}

function sync(): void {
  shown = location.pathname + location.search;
  route.path = pathOf(location.pathname);
  route.search = location.search;
}

/** Intercepts clicks on same-origin links into the console (not new-tab clicks), and follows back/forward. */
export function startRouter(): void {
  addEventListener('popstate', () => {
    const to = location.pathname + location.search;
    // Back or forward cannot be cancelled: the page shown is put back, and it asks.
    if (held(to)) history.pushState(null, '', shown);
    else sync();
  });
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const a = (event.target as Element | null)?.closest('a');
    if (!a || a.target || a.hasAttribute('download') || a.origin !== location.origin) return;
    if (a.pathname !== BASE && !a.pathname.startsWith(BASE + '/')) return;
    event.preventDefault();
    if (held(a.pathname + a.search)) return;
    history.pushState(null, '', a.pathname + a.search);
    sync();
  });
}
