/**
 * The email editor: GrapesJS with grapesjs-mjml, loaded only by the editor page (both are large).
 * Set up to run under the console's CSP and to reach nothing but the service: no icon font from a
 * CDN (`cssIcons`), no telemetry, no storage, no remote placeholder images, no blocks whose defaults point at
 * other sites (social icons, hero pictures).
 */
import 'grapesjs/dist/css/grapes.min.css';
import type { Component, Editor } from 'grapesjs';

/** The blocks offered: layout and content whose defaults load nothing from elsewhere. */
const BLOCKS = ['mj-1-column', 'mj-2-columns', 'mj-3-columns', 'mj-text', 'mj-button', 'mj-image', 'mj-divider', 'mj-spacer'];
const SECTION_BLOCKS = new Set(['mj-1-column', 'mj-2-columns', 'mj-3-columns']);

/** The previews: a desktop mail client's width (the design is 600 px wide), and a phone's, below MJML's 480 px breakpoint. */
export const DEVICES = [
  { id: 'Desktop', name: 'Desktop', width: '' },
  { id: 'Phone', name: 'Phone', width: '340px', widthMedia: '480px' },
] as const;
export type DeviceId = (typeof DEVICES)[number]['id'];

/** An image of the media library, as the asset manager shows it. */
export interface LibraryImage {
  /** Its public URL: what goes into the design. */
  src: string;
  name: string;
  width: number;
  height: number;
}

/**
 * The account's media library, for the asset manager: `list` fills it when it opens, `upload`
 * takes a dropped or chosen file (and answers the stored image, or throws the service's refusal),
 * `onError` shows a refusal. Without it (a person who may only read designs) nothing is uploaded.
 */
export interface MediaLibrary {
  list(): Promise<LibraryImage[]>;
  upload?: (file: File) => Promise<LibraryImage>;
  onError(message: string): void;
}

/** An asset of the library as GrapesJS takes it. */
const assetOf = (image: LibraryImage) => ({ type: 'image', src: image.src, name: image.name, width: image.width, height: image.height });

export interface DesignEditor {
  /** The design as MJML text. */
  mjml(): string;
  setDevice(id: DeviceId): void;
  /** Puts `((name))` at the cursor of the text being edited, else at the end of the selected text, else in a new text block. */
  insertPlaceholder(name: string): void;
  /** Calls `listener` whenever the design changes. */
  onChange(listener: () => void): void;
  /** The link and image addresses of the selected button or image (null when something else is selected). */
  selectedAddresses(): SelectedAddresses | null;
  /** Sets the selected button's or image's link (`href`) or image (`src`) address. */
  setAddress(name: 'href' | 'src', value: string): void;
  /** Opens the media library to choose the selected image's picture (upload included). */
  pickImage(): void;
  /** Calls `listener` whenever the selection changes. */
  onSelect(listener: () => void): void;
  /** Every link of the design: buttons, linked images and the links inside texts, in order. */
  links(): DesignLink[];
  /** Selects the link `id` (of `links()`) in the canvas and scrolls it into view. */
  selectLink(id: string): void;
  /** Whether the design changed since it was opened or last marked saved. */
  isDirty(): boolean;
  /** Marks the design as saved: no unsaved change from here. */
  markSaved(): void;
  /** Lays the canvas out again (after its box changed size). */
  refresh(): void;
  destroy(): void;
}

/** What a selected button (a link), image (an image and a link) or link in a text lets a person set. */
export interface SelectedAddresses {
  type: LinkType;
  href: string;
  src: string;
  /** Whether the link goes somewhere for the mail's reader (see `linkWorks`). */
  works: boolean;
}

export type LinkType = 'mj-button' | 'mj-image' | 'link';

/** A link of the design, as the Links list shows it. */
export interface DesignLink {
  id: string;
  type: LinkType;
  /** The button's or link's text (an image's alt), for the reader to recognise it. */
  text: string;
  href: string;
  works: boolean;
}

/**
 * Whether a link goes somewhere for a mail's reader: a web address, a mail or phone link, or a
 * `((placeholder))` filled per recipient. Empty, `#…`, a relative path or another scheme go
 * nowhere (the review before sending warns about the same ones).
 */
export function linkWorks(href: string): boolean {
  const url = href.trim();
  return /^https?:\/\/[^\s/?#]/i.test(url) || /^(mailto|tel):/i.test(url) || /^\(\(\s*[A-Za-z0-9_]+\s*\)\)/.test(url);
}

const LINK_TYPES = new Set<string>(['mj-button', 'mj-image', 'link']);

/** The text a person sees on a link's component: its words, else an image's alt. */
function linkText(cmp: Component): string {
  const attributes = cmp.getAttributes();
  if (cmp.get('type') === 'mj-image') return String(attributes.alt ?? '') || 'Image';
  const html = cmp.get('type') === 'mj-button' ? String(cmp.get('content') || cmp.getInnerHTML()) : cmp.getInnerHTML();
  const text = new DOMParser().parseFromString(html, 'text/html').body.textContent ?? '';
  return text.replace(/\s+/g, ' ').trim() || '(no text)';
}

/** The closest MJML column holding `cmp` (itself included). */
function columnOf(cmp: Component | undefined | null): Component | undefined {
  for (let c = cmp; c; c = c.parent()) if (c.get('type') === 'mj-column') return c;
  return undefined;
}

function sectionOf(cmp: Component | undefined | null): Component | undefined {
  for (let c = cmp; c; c = c.parent()) if (c.get('type') === 'mj-section' || c.get('type') === 'mj-wrapper') return c;
  return undefined;
}

/** Makes the block tiles buttons for the keyboard: focusable, named by their label, Enter and Space add the block. */
function keyboardBlocks(container: HTMLElement): void {
  for (const el of container.querySelectorAll<HTMLElement>('.gjs-block')) {
    el.setAttribute('role', 'button');
    el.tabIndex = 0;
    el.removeAttribute('title');
    el.querySelector('.gjs-block__media')?.setAttribute('aria-hidden', 'true');
    el.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        el.click();
      }
    });
  }
}

/** Starts the editor in `container` on the MJML text `mjml`; the block tiles go into `blocks`. */
export async function createEditor(opts: {
  container: HTMLElement;
  blocks: HTMLElement;
  mjml: string;
  media?: MediaLibrary;
}): Promise<DesignEditor> {
  const { media } = opts;
  const [{ default: grapesjs }, { default: mjmlPlugin }] = await Promise.all([import('grapesjs'), import('grapesjs-mjml')]);
  const editor: Editor = grapesjs.init({
    container: opts.container,
    height: '100%',
    width: 'auto',
    fromElement: false,
    storageManager: false,
    // GrapesJS otherwise posts usage data to its vendor (and the CSP refuses it, an error in the console).
    telemetry: false,
    // The default is Font Awesome from a CDN: blocked by the CSP, and a request outside the service.
    cssIcons: '',
    panels: { defaults: [] },
    canvas: { styles: [], scripts: [] },
    // The head (default attributes, styles) is no part of the mail's body: grapesjs-mjml would draw
    // its default-attribute elements (an empty text, section and button) at the top of the canvas.
    protectedCss: '* { box-sizing: border-box; } body { margin: 0; } [data-gjs-type="mj-head"] { display: none !important; }',
    // The media library: uploads go to the service (never embedded as base64), one file a request.
    assetManager: {
      upload: media?.upload ? '/media/upload' : false,
      uploadName: 'file',
      multiUpload: false,
      embedAsBase64: false,
      showUrlInput: false,
      assets: [],
      noAssets: 'No images yet: drop one here, or choose a file.',
      uploadFile: (event: DragEvent) => void uploadFiles(event),
    },
    blockManager: { appendTo: opts.blocks, appendOnClick: true },
    deviceManager: { devices: DEVICES.map((d) => ({ ...d })) },
    projectData: { pages: [{ component: opts.mjml }] },
    plugins: [
      (e: Editor) =>
        mjmlPlugin(e, {
          blocks: BLOCKS,
          resetDevices: false,
          // The service's own image, absolute as an email needs it; the user points it at theirs.
          imagePlaceholderSrc: `${location.origin}/images/templates/blank.png`,
          fonts: {},
          importPlaceholder: '',
          // Its dark theme colours would show around the canvas and between the block tiles.
          useCustomTheme: false,
        }),
    ],
  });

  async function uploadFiles(event: DragEvent) {
    const target = event.target as HTMLInputElement | null;
    const files = [...(event.dataTransfer?.files ?? target?.files ?? [])];
    if (!media?.upload) return;
    for (const file of files) {
      try {
        editor.AssetManager.add(assetOf(await media.upload(file)));
        // The open manager shows what it rendered when it opened: render it again with the upload.
        editor.AssetManager.render();
      } catch (err) {
        media.onError(err instanceof Error ? err.message : String(err));
        break;
      }
    }
    if (target && 'value' in target) target.value = '';
  }

  /** Opens the library to choose the picture of `cmp`, an image. */
  function pickFor(cmp: Component | undefined) {
    if (cmp?.get('type') === 'mj-image') editor.runCommand('open-assets', { target: cmp, types: ['image'], accept: 'image/*' });
  }

  // The asset manager sets an image's `src` property; the MJML written out reads its attributes.
  editor.on('component:update:src', (cmp: Component) => {
    if (cmp.get('type') === 'mj-image' && cmp.getAttributes().src !== cmp.get('src')) cmp.addAttributes({ src: String(cmp.get('src')) });
  });

  // The asset manager shows the library as it is when it opens (images uploaded elsewhere too).
  editor.on('asset:open', async () => {
    if (!media) return;
    try {
      const images = await media.list();
      editor.AssetManager.getAll().reset(images.map(assetOf));
      editor.AssetManager.render();
    } catch (err) {
      media.onError(err instanceof Error ? err.message : String(err));
    }
  });

  // A click on a block with nothing fitting selected: choose where it goes (after the last section,
  // or at the end of the last column), so a click always adds it.
  editor.on('block:click', (block: { getId(): string }) => {
    // An image block starts with the choice of its picture: once the click has added and selected
    // it (GrapesJS does so right after this event), the library opens for it.
    if (block.getId() === 'mj-image') setTimeout(() => pickFor(editor.getSelected()), 0);
    const wrapper = editor.getWrapper();
    const selected = editor.getSelected();
    if (SECTION_BLOCKS.has(block.getId())) {
      const section = sectionOf(selected) ?? wrapper?.findType('mj-section').at(-1);
      if (section) editor.select(section);
    } else if (!columnOf(selected)) {
      const within = sectionOf(selected) ?? wrapper;
      const column = within?.findType('mj-column').at(-1);
      if (column) editor.select(column);
    }
  });

  await new Promise<void>((resolve) => editor.onReady(() => resolve()));
  // Opening the design is no change of it.
  editor.clearDirtyCount();
  keyboardBlocks(opts.blocks);
  // The canvas frame is otherwise untitled (axe: frame-title).
  const titleFrame = () => editor.Canvas.getFrameEl()?.setAttribute('title', 'Design canvas');
  titleFrame();
  editor.on('canvas:frame:load', titleFrame);

  return {
    mjml() {
      // Text still being typed into is written back to its component first.
      (editor.getEditing()?.getView() as { syncContent?: () => void } | undefined)?.syncContent?.();
      return editor.getHtml();
    },
    setDevice: (id) => editor.setDevice(id),
    insertPlaceholder(name) {
      const token = `((${name}))`;
      const rte = editor.RichTextEditor as unknown as { globalRte?: { insertHTML(v: string): void } };
      if (editor.getEditing() && rte.globalRte) {
        rte.globalRte.insertHTML(token);
        return;
      }
      const selected = editor.getSelected();
      if (selected?.get('type') === 'mj-text') {
        selected.append({ type: 'textnode', content: ` ${token}` });
        return;
      }
      const body = editor.getWrapper()?.findType('mj-body')[0];
      const column = columnOf(selected) ?? sectionOf(selected)?.findType('mj-column').at(-1) ?? body?.findType('mj-column').at(-1);
      const added = column
        ? column.append(`<mj-text>${token}</mj-text>`)
        : body?.append(`<mj-section><mj-column><mj-text>${token}</mj-text></mj-column></mj-section>`);
      const text = added?.[0]?.get('type') === 'mj-text' ? added[0] : added?.[0]?.findType('mj-text')[0];
      if (text) editor.select(text);
    },
    onChange(listener) {
      editor.on('update', listener);
    },
    selectedAddresses() {
      const selected = editor.getSelected();
      const type = String(selected?.get('type') ?? '') as LinkType;
      if (!selected || !LINK_TYPES.has(type)) return null;
      const attributes = selected.getAttributes();
      const href = String(attributes.href ?? '');
      // An image needs no link; a button or a text's link does.
      return { type, href, src: String(attributes.src ?? ''), works: linkWorks(href) || (type === 'mj-image' && href === '') };
    },
    setAddress(name, value) {
      const selected = editor.getSelected();
      if (selected && LINK_TYPES.has(String(selected.get('type')))) selected.addAttributes({ [name]: value });
    },
    pickImage: () => pickFor(editor.getSelected()),
    onSelect(listener) {
      editor.on('component:toggled', listener);
    },
    links() {
      const body = editor.getWrapper()?.findType('mj-body')[0];
      if (!body) return [];
      const found: DesignLink[] = [];
      const walk = (cmp: Component) => {
        const type = cmp.get('type') as string;
        const href = String(cmp.getAttributes().href ?? '');
        if (LINK_TYPES.has(type) && !(type === 'mj-image' && href === ''))
          found.push({ id: cmp.cid, type: type as LinkType, text: linkText(cmp), href, works: linkWorks(href) });
        cmp.components().forEach(walk);
      };
      walk(body);
      return found;
    },
    selectLink(id) {
      const body = editor.getWrapper()?.findType('mj-body')[0];
      let target: Component | undefined;
      const walk = (cmp: Component) => {
        if (cmp.cid === id) target = cmp;
        else cmp.components().forEach(walk);
      };
      if (body) walk(body);
      if (!target) return;
      editor.select(target);
      target.getEl()?.scrollIntoView({ block: 'center' });
    },
    isDirty: () => editor.getDirtyCount() > 0,
    markSaved: () => void editor.clearDirtyCount(),
    refresh: () => editor.refresh(),
    destroy: () => editor.destroy(),
  };
}
