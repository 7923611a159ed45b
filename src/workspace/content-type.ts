/**
 * Content type from the bytes, never from the name. `complete`: `buf` is the whole file (a
 * prefix of a larger file is classified as text when the prefix is valid UTF-8, and never as
 * JSON, which needs the whole document to parse).
 */
export function detectContentType(buf: Uint8Array, complete: boolean): string {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const starts = (sig: number[], at = 0) => b.length >= at + sig.length && sig.every((v, i) => b[at + i] === v);
  const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (starts([0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (starts(ascii('GIF87a')) || starts(ascii('GIF89a'))) return 'image/gif';
  if (starts(ascii('RIFF')) && starts(ascii('WEBP'), 8)) return 'image/webp';
  if (starts(ascii('%PDF-'))) return 'application/pdf';
  if (starts([0x50, 0x4b, 0x03, 0x04]) || starts([0x50, 0x4b, 0x05, 0x06]) || starts([0x50, 0x4b, 0x07, 0x08])) return 'application/zip';
  if (starts([0x1f, 0x8b])) return 'application/gzip';
  // NUL bytes are valid UTF-8 but mark binary data in practice.
  if (b.includes(0)) return 'application/octet-stream';
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(b, { stream: !complete });
  } catch {
    return 'application/octet-stream';
  }
  if (complete) {
    const t = text.replace(/^\uFEFF/, '').trimStart();
    if (t.startsWith('{') || t.startsWith('[')) {
      try {
        JSON.parse(t);
        return 'application/json';
      } catch {
        /* text */
      }
    }
  }
  return 'text/plain; charset=utf-8';
}
