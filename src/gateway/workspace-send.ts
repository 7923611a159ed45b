/**
 * Sends an opened workspace file over a uWebSockets.js response.
 *
 * Files up to `wholeReadBytes` (1 MiB) are read at once and sent with one corked `end`.
 * Larger ones are streamed: one chunk is read at a time and handed to `tryEnd`; when the
 * socket does not take it all, the rest of that chunk waits for `onWritable` (the next read
 * happens only after the chunk is fully accepted), so at most one chunk per response is held
 * in memory. An aborted response stops the loop; the file handle is always closed.
 */
import type { HttpResponse } from 'uWebSockets.js';
import { detectContentType, type OpenedFile } from '../workspace/index.js';
import { STATUS_TEXT } from './http.js';

export const WHOLE_READ_BYTES = 1024 * 1024;
export const STREAM_CHUNK_BYTES = 256 * 1024;

/** Shared with the route's onAborted: `wake` releases a pending onWritable wait. */
export interface SendState {
  aborted: boolean;
  wake?: () => void;
  /** The status line went out: a later failure can only close the connection. */
  started?: boolean;
}

async function readFully(f: OpenedFile, buf: Buffer, position: number): Promise<number> {
  let n = 0;
  while (n < buf.length) {
    const { bytesRead } = await f.fh.read(buf, n, buf.length - n, position + n);
    if (bytesRead === 0) break;
    n += bytesRead;
  }
  return n;
}

export async function sendFile(
  res: HttpResponse,
  f: OpenedFile,
  headers: Record<string, string>,
  state: SendState,
  opts: { chunkBytes?: number } = {},
): Promise<void> {
  const size = f.size;
  const writeHead = (contentType: string) => {
    res.writeStatus(STATUS_TEXT[200]);
    for (const [k, v] of Object.entries({ ...headers, 'Content-Type': contentType })) res.writeHeader(k, v);
  };
  try {
    if (size <= WHOLE_READ_BYTES) {
      const buf = Buffer.allocUnsafe(size);
      const n = await readFully(f, buf, 0);
      if (state.aborted) return;
      const body = buf.subarray(0, n); // a file that shrank meanwhile is sent as it is now
      res.cork(() => {
        state.started = true;
        writeHead(detectContentType(body, true));
        res.end(body);
      });
      return;
    }

    const chunkBytes = opts.chunkBytes ?? STREAM_CHUNK_BYTES;
    let pos = 0;
    let first = true;
    while (pos < size && !state.aborted) {
      const chunk = Buffer.allocUnsafe(Math.min(chunkBytes, size - pos));
      const n = await readFully(f, chunk, pos);
      if (state.aborted) return;
      if (n < chunk.length) {
        // The file shrank after stat: the announced Content-Length cannot be honoured.
        res.close();
        return;
      }
      pos += n;
      let ok = false;
      let done = false;
      let lastOffset = 0;
      res.cork(() => {
        if (first) writeHead(detectContentType(chunk, false));
        state.started = true;
        first = false;
        lastOffset = res.getWriteOffset();
        [ok, done] = res.tryEnd(chunk, size);
      });
      if (done) return;
      if (ok) continue;
      // Back-pressure: wait until the socket drained, then offer the rest of this chunk.
      done = await new Promise<boolean>((resolve) => {
        state.wake = () => resolve(true);
        res.onWritable((offset) => {
          const [ok2, done2] = res.tryEnd(chunk.subarray(offset - lastOffset), size);
          if (done2) resolve(true);
          else if (ok2) resolve(false);
          return ok2;
        });
      });
      state.wake = undefined;
      if (done) return;
    }
  } catch (err) {
    if (state.started && !state.aborted) res.close();
    throw err;
  } finally {
    await f.fh.close().catch(() => {});
  }
}
