/**
 * Reads a streamed OpenAI-style SSE body (`data: {json}` events ending with `data: [DONE]`) and
 * hands each event's data text to a callback. It replaces the openai SDK's stream iterator on the
 * hot path: that one builds several async generators, byte-array copies and promises per chunk,
 * which at thousands of streamed tokens a second was the service's largest CPU consumer. Here a
 * network read costs one `read()`, one streaming UTF-8 decode and one synchronous parser pass,
 * however many events it holds or splits.
 */
import { createParser } from 'eventsource-parser';

/**
 * Calls `onData(data, event)` for each event of `body` up to `[DONE]`, in order; resolves when
 * the body ends. Events after `[DONE]` are read and dropped, as the SDK does, so that the
 * response completes and its connection can be reused; an event the body ends in the middle of
 * (no blank line after it) is not an event (the SSE rule, and the SDK's behaviour). Rejects
 * with the body's own error (a dropped connection, an abort) or with what `onData` throws; in
 * the latter case the body is cancelled, which closes the connection.
 */
export async function readSseData(body: ReadableStream<Uint8Array>, onData: (data: string, event: string | undefined) => void): Promise<void> {
  let done = false;
  const parser = createParser({
    onEvent: (e) => {
      if (done) return;
      if (e.data.startsWith('[DONE]')) done = true;
      else onData(e.data, e.event);
    },
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  for (;;) {
    const { value, done: ended } = await reader.read();
    if (ended) break;
    try {
      parser.feed(decoder.decode(value, { stream: true }));
    } catch (err) {
      reader.cancel().catch(() => {});
      throw err;
    }
  }
}
