/** A note to show on the segment list after leaving a page that no longer exists (a deleted segment). */
export const flash = $state({ text: '' });
