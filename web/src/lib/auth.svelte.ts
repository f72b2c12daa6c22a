/**
 * Who is signed in. The console holds no key: the service keeps the session in the HttpOnly cookie
 * `campaign_session`, which no script can read, and this module keeps what the session answered:
 * the person, their scopes (from their role), the account's two-factor rule and the CSRF token sent
 * with every call, in memory. A mark in localStorage (no secret: `signed-in`, or nothing) says that
 * this browser holds a session: a new tab asks `GET /session` only then, and the other tabs follow
 * when it comes or goes. A 401 from any call returns to the sign-in page with the service's words.
 */
import { api, ApiError, connect, type Message } from './api';

/** The answer of `POST /session/sign-in` and `GET /session`. */
type SessionAnswer = Message<'/session'>;

/** A person as the API shows them. */
export type Person = SessionAnswer['user'];

export const session = $state<{
  /** `checking` until `GET /session` answered at start. */
  state: 'checking' | 'out' | 'in';
  user: Person | null;
  scopes: string[];
  requireTwoFactor: boolean;
  /** Why the person is on the sign-in page (the session ended, signed out in another tab); shown there. */
  notice: string;
}>({ state: 'checking', user: null, scopes: [], requireTwoFactor: false, notice: '' });

let csrf = '';

/** The mark of a session in this browser (its tabs share the cookie, and this). */
const MARK = 'campaign.session';

function take(answer: SessionAnswer): void {
  csrf = answer.csrf_token;
  session.user = answer.user;
  session.scopes = answer.scopes;
  session.requireTwoFactor = answer.require_two_factor === 1;
  session.notice = '';
  session.state = 'in';
  localStorage.setItem(MARK, 'signed-in');
}

function clear(notice = ''): void {
  csrf = '';
  session.user = null;
  session.scopes = [];
  session.requireTwoFactor = false;
  session.notice = notice;
  session.state = 'out';
  localStorage.removeItem(MARK);
}

/**
 * Reads the session the cookie names (a new tab, a reload, another tab's sign-in); true when signed
 * in. Without the mark there is none to read: the sign-in page shows at once, with no request.
 */
export async function refresh(): Promise<boolean> {
  if (session.state === 'checking' && !localStorage.getItem(MARK)) {
    clear();
    return false;
  }
  try {
    take(await api.get('/session'));
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) clear(session.state === 'in' ? e.message : '');
    else if (session.state === 'checking') clear(e instanceof Error ? e.message : String(e));
    return false;
  }
}

connect({
  csrf: () => csrf,
  ended: (text) => {
    if (session.state === 'in') clear(text);
  },
  renew: () => refresh(),
});

// Another tab signed in (the mark came) or out (it went, by a sign-out or an ended session).
addEventListener('storage', (event) => {
  if (event.key !== MARK && event.key !== null) return;
  if (event.newValue) void refresh();
  else if (session.state === 'in') clear('You were signed out in another tab.');
});

/**
 * Signs in with an email and a password (and the two-factor code or a recovery code when asked
 * for). Throws the service's refusal: `Invalid email or password`, `Two-factor code required`, …
 */
export async function signIn(email: string, password: string, code?: string): Promise<void> {
  const form = code ? { email, password, code } : { email, password };
  take((await api.post('/session/sign-in', form)).message);
}

/** Ends the session at the service (the cookie goes), here and in the other tabs. */
export async function signOut(): Promise<void> {
  try {
    await api.post('/session/sign-out');
  } catch {
    // Ended already (a 401): signed out all the same.
  }
  clear();
}

/** Whether the signed-in person may use `scope` (`contacts.write`, `users.read`, …): offer only what would work. */
export function can(scope: string): boolean {
  return session.scopes.includes(scope);
}

/** Whether the account requires two-factor authentication of a person who has not set it up: only My account is open. */
export function mustSetUpTwoFactor(): boolean {
  return session.requireTwoFactor && session.user?.two_factor === 0;
}
