/** Who is signed in: the keys of this tab (see session.ts) and the API client made with them. */
import { api, type Api } from './api';
import { clearKeys, readKeys, saveKeys, type Keys } from './session';

export const session = $state<{ keys: Keys | null }>({ keys: readKeys() });

export function signIn(keys: Keys): void {
  saveKeys(keys);
  session.keys = keys;
}

export function signOut(): void {
  clearKeys();
  session.keys = null;
}

/** The API client of the signed-in account (pages are only shown while signed in). */
export function client(): Api {
  if (!session.keys) throw new Error('Not signed in.');
  return api(session.keys);
}
