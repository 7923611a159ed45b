/**
 * Sign-in: with an API key (checked against GET /api/v1/auth/me), or with an account's email
 * and password (POST /api/v1/auth/login; the refresh token renews the access token).
 */
import { useState } from 'preact/hooks';
import { go, href } from './router.js';
import { messageOf, signInWithKey, signInWithPassword } from './session.js';

export function SignInPage() {
  const [apiKey, setApiKey] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const run = (fn: () => Promise<void>) => async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await fn();
      go(href.new);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="page-title" class="sign-in">
      <h1 id="page-title" tabIndex={-1}>
        Sign in
      </h1>
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      <div class="cards">
        <form class="form card" onSubmit={run(() => signInWithKey(apiKey.trim()))}>
          <h2>With an API key</h2>
          <label for="api-key">API key</label>
          <input id="api-key" name="api-key" type="password" autocomplete="off" required value={apiKey} onInput={(e) => setApiKey(e.currentTarget.value)} />
          <button type="submit" class="primary" disabled={busy || !apiKey.trim()}>
            Sign in with key
          </button>
        </form>
        <form class="form card" onSubmit={run(() => signInWithPassword(email.trim(), password))}>
          <h2>With an account</h2>
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          <label for="password">Password</label>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
          <button type="submit" class="primary" disabled={busy || !email.trim() || !password}>
            Sign in
          </button>
        </form>
      </div>
    </section>
  );
}
