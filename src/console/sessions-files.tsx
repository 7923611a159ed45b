/**
 * A session's workspace files (GET /api/v1/sessions/{sessionId}/files?recursive=true: the files
 * its agents wrote, sorted by path), each with a download button. The download needs the
 * caller's credentials (a header), so a plain link will not do: the file is fetched with the
 * client (GET .../files/{path} as a Blob) and saved through a Blob URL, named as the file.
 */
import { useEffect, useState } from 'preact/hooks';
import { ok } from '../client/index.js';
import { time } from './format.js';
import { call, messageOf } from './session.js';

async function listFiles(sessionId: string) {
  return call(async (api) => ok(await api.GET('/api/v1/sessions/{sessionId}/files', { params: { path: { sessionId }, query: { recursive: true } } })));
}
type Listing = Awaited<ReturnType<typeof listFiles>>;
type Entry = Listing['files'][number];

/** Bytes as B, KB, MB. */
function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Fetches the file at `path` (as listed: starting with /) with the credentials and hands it to the browser as a download. */
async function download(sessionId: string, path: string, name: string): Promise<void> {
  const blob = await call(async (api) =>
    ok(
      await api.GET('/api/v1/sessions/{sessionId}/files/{path}', {
        // The path's own slashes travel encoded (%2F): the service decodes the whole rest of the URL.
        params: { path: { sessionId, path: path.replace(/^\/+/, '') } },
        parseAs: 'blob',
      }),
    ),
  );
  // An empty file has no body to parse: an empty Blob.
  const url = URL.createObjectURL(blob ?? new Blob([]));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  // The browser has taken the data once the click's download started.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function FileRow({ sessionId, f, onError }: { sessionId: string; f: Entry; onError: (msg: string | undefined) => void }) {
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setBusy(true);
    onError(undefined);
    try {
      await download(sessionId, f.path, f.name);
    } catch (err) {
      onError(`${f.path}: ${messageOf(err)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <tr data-path={f.path}>
      <td>
        <code>{f.path}</code>
      </td>
      <td>{size(f.size)}</td>
      <td>{time(f.modified_at)}</td>
      <td>
        <button type="button" disabled={busy} onClick={() => void save()}>
          Download<span class="visually-hidden"> {f.path}</span>
        </button>
      </td>
    </tr>
  );
}

export function SessionFiles({ sessionId }: { sessionId: string }) {
  const [listing, setListing] = useState<Listing>();
  const [error, setError] = useState<string>();
  const [loadError, setLoadError] = useState<string>();
  const refresh = () => {
    setLoadError(undefined);
    listFiles(sessionId).then(setListing, (err) => setLoadError(messageOf(err)));
  };
  useEffect(refresh, [sessionId]);
  const files = listing?.files.filter((f) => !f.is_dir) ?? [];
  return (
    <>
      <div class="toolbar">
        <h2>Files</h2>
        <button type="button" onClick={refresh}>
          Refresh files
        </button>
      </div>
      <p class="error ss-tight" role="alert">
        {error ?? loadError ?? ''}
      </p>
      {listing === undefined ? (
        loadError ? null : (
          <p class="muted">Loading…</p>
        )
      ) : files.length === 0 ? (
        <p class="muted">No files in this session's workspace.</p>
      ) : (
        <div class="table-wrap">
          <table class="ss-files" data-testid="session-files">
            <caption class="visually-hidden">Files of the session's workspace</caption>
            <thead>
              <tr>
                <th scope="col">Path</th>
                <th scope="col">Size</th>
                <th scope="col">Modified</th>
                <th scope="col">
                  <span class="visually-hidden">Download</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {files.map((f) => (
                <FileRow key={f.path} sessionId={sessionId} f={f} onError={setError} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {listing?.truncated ? <p class="muted">More than 10,000 entries: the list is cut.</p> : null}
    </>
  );
}
