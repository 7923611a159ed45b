/**
 * A raw HTTP/1.1 client over plain sockets, so that nothing (fetch's URL normalisation, header
 * validation) cleans a malformed request up on the way.
 */
import net from 'node:net';

/** How long a request may take to be answered before it counts as not answered. */
export const REQUEST_TIMEOUT_MS = 10_000;

export interface Answer {
  /** Status of the response; undefined when none came. */
  status?: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Bytes received in all. */
  bytes: number;
  /** The server closed the connection (with or without an answer). */
  closed: boolean;
  timedOut: boolean;
  ms: number;
}

/**
 * Sends `data` on a fresh connection and waits for one complete response (Content-Length,
 * chunked, or until close; an event stream or a 101 counts once its head is in), the server
 * closing, or `timeoutMs`.
 */
export function send(port: number, data: Buffer | Buffer[], timeoutMs: number, o: { head?: boolean } = {}): Promise<Answer> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const s = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let finished = false;
    let parsed: { status: number; headers: Record<string, string>; bodyAt: number } | undefined;
    const finish = (closed: boolean, timedOut: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      s.destroy();
      const body = parsed ? buf.subarray(parsed.bodyAt) : Buffer.alloc(0);
      resolve({ status: parsed?.status, headers: parsed?.headers ?? {}, body, bytes: buf.length, closed, timedOut, ms: Date.now() - t0 });
    };
    const timer = setTimeout(() => finish(false, true), timeoutMs);
    s.setNoDelay(true);
    s.on('connect', () => {
      // Segments of an array go out 50 ms apart, so that the server reads them separately.
      const segs = Array.isArray(data) ? data : [data];
      segs.forEach((d, i) => (i === 0 ? s.write(d) : setTimeout(() => !s.destroyed && s.write(d), 50 * i)));
    });
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      while (!parsed) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        // An interim answer (100 Continue) is not the answer: the real one follows.
        if (/^HTTP\/1\.[01] 1(?!01)\d\d/.test(buf.subarray(0, 12).toString('latin1'))) {
          buf = buf.subarray(end + 4);
          continue;
        }
        const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
        const headers: Record<string, string> = {};
        for (const l of lines.slice(1)) {
          const c = l.indexOf(':');
          if (c > 0) headers[l.slice(0, c).trim().toLowerCase()] = l.slice(c + 1).trim();
        }
        parsed = { status: m ? Number(m[1]) : -1, headers, bodyAt: end + 4 };
      }
      const { status, headers, bodyAt } = parsed;
      const body = buf.length - bodyAt;
      if (o.head || status === 101 || status === 204 || status === 304 || (headers['content-type'] ?? '').startsWith('text/event-stream')) finish(false, false);
      else if (headers['content-length'] !== undefined && body >= Number(headers['content-length'])) finish(false, false);
      else if (/chunked/i.test(headers['transfer-encoding'] ?? '') && buf.subarray(bodyAt).includes('0\r\n\r\n')) finish(false, false);
    });
    s.on('end', () => finish(true, false));
    s.on('close', () => finish(true, false));
    s.on('error', () => finish(true, false));
  });
}

export type Headers = [string, string | Buffer][];

export function request(method: string, target: string, headers: Headers = [], body?: Buffer | string): Buffer {
  const parts: Buffer[] = [Buffer.from(`${method} ${target} HTTP/1.1\r\nHost: fuzz\r\n`, 'latin1')];
  for (const [k, v] of headers) parts.push(Buffer.from(`${k}: `, 'latin1'), Buffer.isBuffer(v) ? v : Buffer.from(v, 'latin1'), Buffer.from('\r\n'));
  const b = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  if (b) parts.push(Buffer.from(`Content-Length: ${b.length}\r\n`));
  parts.push(Buffer.from('\r\n'));
  if (b) parts.push(b);
  return Buffer.concat(parts);
}
