/** A saved design as the API stores it (MJML's JSON form): one section with one text block holding `text`. */
export function mjmlText(text: string): string {
  return JSON.stringify({
    tagName: 'mjml',
    attributes: {},
    children: [
      {
        tagName: 'mj-body',
        attributes: {},
        children: [
          {
            tagName: 'mj-section',
            attributes: {},
            children: [{ tagName: 'mj-column', attributes: {}, children: [{ tagName: 'mj-text', attributes: {}, content: text }] }],
          },
        ],
      },
    ],
  });
}
