/**
 * The designs a mail can use: the shipped design templates (`GET /get-design/template`) and the
 * account's saved designs (`GET /designs`). Sends and automation emails take either as
 * `template_id` + `template_json`: a shipped one by its id with no JSON (the service uses its own
 * copy), a saved one as the blank template (id 1) with the design's MJML JSON.
 */
import { api, type Message } from './api';

/** A shipped design template (`GET /get-design/template`). */
export type DesignTemplate = Message<'/get-design/template'>['templates'][number];

/** A design the account saved (`GET /designs`). */
export type SavedDesign = Message<'/designs'>['designs'][number];

/** One choice of the design picker, ready for the create forms. */
export interface DesignChoice {
  /** `t<id>` for a shipped template, `d<id>` for a saved design. */
  key: string;
  label: string;
  template_id: number;
  /** Empty for a shipped template (the service uses its own), the MJML JSON for a saved design. */
  template_json: string;
  /** The shipped preview image's file name (a saved design shows the blank one's). */
  preview_img: string;
  html: string;
}

/** Every design the account can choose: the shipped ones first, then its saved designs, newest first. */
export async function loadDesignChoices(): Promise<DesignChoice[]> {
  const [shipped, saved] = await Promise.all([api.get('/get-design/template'), api.get('/designs')]);
  const blank = shipped.templates.find((t) => t.is_blank === 1) ?? shipped.templates[0];
  return [
    ...shipped.templates.map((t) => ({
      key: `t${t.id}`,
      label: t.template_name,
      template_id: t.id,
      template_json: '',
      preview_img: t.preview_image,
      html: t.html_code,
    })),
    ...saved.designs.map((d) => ({
      key: `d${d.id}`,
      label: d.name,
      template_id: blank?.id ?? 1,
      template_json: d.template_json,
      preview_img: blank?.preview_image ?? '',
      html: d.html_code,
    })),
  ];
}

/**
 * An email's HTML for a preview in the console: without the stylesheets it would fetch from other
 * sites (MJML links web fonts, e.g. Google's, both as `<link>` and as `@import`). The console reaches
 * nothing but the service, and its policy would refuse them anyway; the preview falls back to the
 * email's other fonts, as many mail clients do.
 */
export function previewHtml(html: string): string {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  for (const link of doc.querySelectorAll('link[rel~="stylesheet"]')) link.remove();
  for (const style of doc.querySelectorAll('style'))
    style.textContent = (style.textContent ?? '').replace(/@import\s+(url\()?[^;]*;?/gi, '');
  return '<!doctype html>\n' + doc.documentElement.outerHTML;
}
