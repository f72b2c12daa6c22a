/** How the console writes the API's values for people. */

/** An API time (`2026-11-25T12:00:00.000000Z` or `2026-11-25 12:00:00`) as short readable UTC text. */
export function when(value: string | null): string {
  if (!value) return '';
  return `${value.replace('T', ' ').slice(0, 16)} UTC`;
}
