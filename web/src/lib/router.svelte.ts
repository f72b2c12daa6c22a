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

/** Goes to a console page (`/contacts/12`), adding it to the history. */
export function navigate(path: string): void {
  history.pushState(null, '', href(path));
  sync();
}

function sync(): void {
  route.path = pathOf(location.pathname);
  route.search = location.search;
}

/** Intercepts clicks on same-origin links into the console (not new-tab clicks), and follows back/forward. */
export function startRouter(): void {
  addEventListener('popstate', sync);
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const a = (event.target as Element | null)?.closest('a');
    if (!a || a.target || a.hasAttribute('download') || a.origin !== location.origin) return;
    if (a.pathname !== BASE && !a.pathname.startsWith(BASE + '/')) return;
    event.preventDefault();
    history.pushState(null, '', a.pathname + a.search);
    sync();
  });
}
