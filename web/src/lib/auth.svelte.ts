/**
 * Who is signed in. The console holds no key: the service keeps the session in the HttpOnly cookie
 * `campaign_session`, which no script can read, and this module keeps what the session answered:
 * the person, their scopes (from their role), the account's two-factor rule and the CSRF token sent
 * with every call. A new tab asks `GET /session`; a sign-in or sign-out is told to the other tabs
 * of the browser; a 401 from any call returns to the sign-in page with the service's words.
 */
import { api, ApiError, call, connect, type Api } from './api';

/** A person as the API shows them. */
export interface Person {
  id: number;
  email: string;
  name: string | null;
  role: 'owner' | 'admin' | 'editor' | 'viewer';
  two_factor: number;
  last_sign_in_at: string | null;
  created_at: string;
}

/** The answer of `POST /session/sign-in` and `GET /session`. */
interface SessionAnswer {
  user: Person;
  csrf_token: string;
  scopes: string[];
  require_two_factor: number;
}

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

/** Sign-ins and sign-outs, told to the other tabs of this browser (they share the cookie). */
const tabs = typeof BroadcastChannel === 'function' ? new BroadcastChannel('campaign-session') : null;

function take(answer: SessionAnswer): void {
  csrf = answer.csrf_token;
  session.user = answer.user;
  session.scopes = answer.scopes;
  session.requireTwoFactor = answer.require_two_factor === 1;
  session.notice = '';
  session.state = 'in';
}

function clear(notice = ''): void {
  csrf = '';
  session.user = null;
  session.scopes = [];
  session.requireTwoFactor = false;
  session.notice = notice;
  session.state = 'out';
}

/** Reads the session the cookie names, if any (a new tab, a reload, another tab's sign-in); true when signed in. */
export async function refresh(): Promise<boolean> {
  try {
    take((await call<{ message: SessionAnswer }>('GET', '/session')).message);
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

tabs?.addEventListener('message', (event: MessageEvent<string>) => {
  if (event.data === 'signed-in') void refresh();
  if (event.data === 'signed-out' && session.state === 'in') clear('You signed out in another tab.');
});

/**
 * Signs in with an email and a password (and the two-factor code or a recovery code when asked
 * for). Throws the service's refusal: `Invalid email or password`, `Two-factor code required`, …
 */
export async function signIn(email: string, password: string, code?: string): Promise<void> {
  const form = code ? { email, password, code } : { email, password };
  take((await call<{ message: SessionAnswer }>('POST', '/session/sign-in', { form })).message);
  tabs?.postMessage('signed-in');
}

/** Ends the session at the service (the cookie goes), here and in the other tabs. */
export async function signOut(): Promise<void> {
  try {
    await call('POST', '/session/sign-out');
  } catch {
    // Ended already (a 401): signed out all the same.
  }
  clear();
  tabs?.postMessage('signed-out');
}

/** Whether the signed-in person may use `scope` (`contacts.write`, `users.read`, …): offer only what would work. */
export function can(scope: string): boolean {
  return session.scopes.includes(scope);
}

/** Whether the account requires two-factor authentication of a person who has not set it up: only My account is open. */
export function mustSetUpTwoFactor(): boolean {
  return session.requireTwoFactor && session.user?.two_factor === 0;
}

/** The API client of the signed-in person (pages are only shown while signed in). */
export function client(): Api {
  return api();
}
