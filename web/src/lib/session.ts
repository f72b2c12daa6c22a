/**
 * The account's keys for this browser tab: kept in sessionStorage only (never a cookie, a URL or
 * localStorage), so they go when the tab closes or the user signs out.
 */
export interface Keys {
  publicKey: string;
  secretKey: string;
}

const PUBLIC = 'campaign.publicKey';
const SECRET = 'campaign.secretKey';

/** The keys signed in with, or null. */
export function readKeys(): Keys | null {
  const publicKey = sessionStorage.getItem(PUBLIC);
  const secretKey = sessionStorage.getItem(SECRET);
  return publicKey && secretKey ? { publicKey, secretKey } : null;
}

export function saveKeys(keys: Keys): void {
  sessionStorage.setItem(PUBLIC, keys.publicKey);
  sessionStorage.setItem(SECRET, keys.secretKey);
}

export function clearKeys(): void {
  sessionStorage.removeItem(PUBLIC);
  sessionStorage.removeItem(SECRET);
}
