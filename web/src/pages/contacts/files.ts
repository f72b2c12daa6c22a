/** What the Contacts pages share: a blob saved as a download (fetched with `download` of lib/api), a field name as a label. */

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
