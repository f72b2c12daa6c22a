/**
 * Files the Contacts pages hand to the browser: a keyed download (the CSV sample needs the key
 * headers, so a plain link cannot fetch it) and a blob saved under a name.
 */
import { ApiError } from '../../lib/api';
import type { Keys } from '../../lib/session';

/** Fetches `path` with the key headers and answers its body as a Blob (a failure as an ApiError). */
export async function fetchFile(keys: Keys, path: string): Promise<Blob> {
  let res: Response;
  try {
    res = await fetch(path, { headers: { PublicKey: keys.publicKey, SecretKey: keys.secretKey } });
  } catch {
    throw new ApiError(0, 'The service cannot be reached. Check your connection and try again.');
  }
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { errors?: unknown } | null;
    throw new ApiError(res.status, typeof body?.errors === 'string' ? body.errors : `The service answered ${res.status}.`);
  }
  return res.blob();
}

/** Offers `blob` as a download named `name` (an `<a download>` clicked once, then let go). */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A field name as a label: `birth_date` → `Birth date`. */
export function fieldLabel(name: string): string {
  const words = name.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
