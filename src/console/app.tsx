/**
 * The console's shell: finds out whether authentication is off, sends a visitor without
 * credentials to sign-in, shows the header (navigation, who is signed in, sign out) and the
 * page of the route, and moves focus to the page's heading on every route change.
 */
import { useEffect, useState } from 'preact/hooks';
import { AgentsPage } from './agents.js';
import { ApprovalsPage } from './approvals.js';
import { ChannelsPage } from './channels.js';
import { DetailPage } from './detail.js';
import { LivePage } from './live.js';
import { NewTaskPage } from './new-task.js';
import { ReviewPage } from './review.js';
import { href, useRoute, type Route } from './router.js';
import { SchedulesPage } from './schedules.js';
import { authIsOff, credentials, messageOf, onCredentials, setCredentials } from './session.js';
import { SessionsPage } from './sessions.js';
import { SignInPage } from './sign-in.js';
import { SwarmPage } from './swarm.js';
import { TasksPage } from './tasks.js';
import { ToolsPage } from './tools.js';

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'tasks':
      return <TasksPage />;
    case 'detail':
      return <DetailPage id={route.id} key={route.id} />;
    case 'live':
      return <LivePage id={route.id} key={route.id} />;
    case 'review':
      return <ReviewPage id={route.id} key={route.id} />;
    case 'swarm':
      return <SwarmPage id={route.id} key={route.id} />;
    case 'approvals':
      return <ApprovalsPage />;
    case 'agents':
      return <AgentsPage id={route.id} key={route.id ?? ''} />;
    case 'tools':
      return <ToolsPage name={route.name} key={route.name ?? ''} />;
    case 'sessions':
      return <SessionsPage id={route.id} key={route.id ?? ''} />;
    case 'schedules':
      return <SchedulesPage id={route.id} key={route.id ?? ''} />;
    case 'channels':
      return <ChannelsPage />;
    case 'sign-in':
      return <SignInPage />;
    default:
      return <NewTaskPage />;
  }
}

/** The main navigation: where each link goes, its text, and the pages it stands for. */
const NAV: [string, string, Route['page'][]][] = [
  [href.new, 'New task', ['new', 'live']],
  [href.tasks, 'Tasks', ['tasks', 'detail', 'review', 'swarm']],
  [href.approvals, 'Approvals', ['approvals']],
  [href.agents, 'Agents', ['agents']],
  [href.tools, 'Tools', ['tools']],
  [href.sessions, 'Sessions', ['sessions']],
  [href.schedules, 'Schedules', ['schedules']],
  [href.channels, 'Channels', ['channels']],
];

export function App() {
  const route = useRoute();
  const [creds, setCreds] = useState(credentials);
  const [authOff, setAuthOff] = useState<boolean>();
  const [error, setError] = useState<string>();

  useEffect(() => onCredentials(() => setCreds(credentials())), []);
  useEffect(() => {
    authIsOff().then(setAuthOff, (err) => {
      setAuthOff(false);
      setError(`cannot reach the service: ${messageOf(err)}`);
    });
  }, []);
  // A new page: its heading takes the focus (screen readers announce it; Tab goes on from there).
  useEffect(() => {
    document.querySelector<HTMLElement>('#page-title')?.focus();
  }, [route, authOff]);

  const signedIn = authOff || (creds && creds.kind !== 'none');
  const shown: Route = authOff === undefined ? route : signedIn ? route : { page: 'sign-in' };
  const who = creds?.kind === 'jwt' ? creds.email : creds?.kind === 'key' ? 'API key' : '';

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">taskorch</span>
        {signedIn ? (
          <nav aria-label="Main">
            {NAV.map(([to, text, pages]) => (
              <a key={to} href={to} aria-current={pages.includes(route.page) ? 'page' : undefined}>
                {text}
              </a>
            ))}
          </nav>
        ) : null}
        <span class="who">
          {who}
          {creds && creds.kind !== 'none' ? (
            <button type="button" class="link" onClick={() => setCredentials(undefined)}>
              Sign out
            </button>
          ) : null}
        </span>
      </header>
      <main id="main">
        {authOff ? (
          <p class="banner" role="note" data-testid="auth-off">
            Authentication is off on this service (GATEWAY_SKIP_AUTH): no sign-in needed, and anyone who can reach it can use it.
          </p>
        ) : null}
        {error ? (
          <p class="banner error" role="alert">
            {error}
          </p>
        ) : null}
        {authOff === undefined ? <p class="muted">Loading…</p> : <Page route={shown} />}
      </main>
    </>
  );
}
