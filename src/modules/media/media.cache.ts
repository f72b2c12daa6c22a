/** One served image, as the cache keeps it. */
export interface ServedImage {
  bytes: Buffer;
  type: string;
  etag: string;
}

interface Entry {
  image: ServedImage;
  /** When the database last said the image exists (ms); past `recheckMs` it is asked again. */
  checkedAt: number;
}

/**
 * The images served lately, least recently used dropped first, their bytes together at most
 * `maxBytes` (`MEDIA_CACHE_MB`): a campaign's opens load the same few images thousands of times,
 * and each should not read the database. An image deleted by another process stops being served
 * here once its entry is `recheckMs` old (the next request asks the database whether it still exists).
 */
export class MediaCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly recheckMs: number,
  ) {}

  /** The cached image and whether it is due for a check, or undefined. */
  get(key: string, now: number): { image: ServedImage; stale: boolean } | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    // Map order is insertion order: moving the entry to the end keeps the oldest use first.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return { image: entry.image, stale: now - entry.checkedAt >= this.recheckMs };
  }

  /** Keeps an image (not one larger than a quarter of the cache, which would evict everything else). */
  set(key: string, image: ServedImage, now: number): void {
    this.delete(key);
    const size = image.bytes.length;
    if (size > this.maxBytes / 4) return;
    this.entries.set(key, { image, checkedAt: now });
    this.bytes += size;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.image.bytes.length;
    }
  }

  /** Marks an entry as just checked. */
  touch(key: string, now: number): void {
    const entry = this.entries.get(key);
    if (entry) entry.checkedAt = now;
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.image.bytes.length;
  }

  /** The bytes held now. */
  size(): number {
    return this.bytes;
  }
}
