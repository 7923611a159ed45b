/**
 * Hides configured secrets (a source's registered header values, a stdio server's environment
 * values) in text that leaves the source: error messages, logs, what an API answers. A server or
 * API may quote the key it refused, and such text reaches the model, events and API replies.
 */

/**
 * A function replacing each secret with `[redacted]`: each whole value, and each word of it of
 * at least `minLength` characters (the token after "Bearer"); shorter values are left alone, as
 * replacing them would garble ordinary text without hiding anything worth hiding.
 */
export function redactor(values: string[], minLength = 4): (s: string) => string {
  const secrets = [...new Set(values.flatMap((v) => [v, ...v.split(/\s+/)]).filter((s) => s.length >= minLength))].sort((a, b) => b.length - a.length);
  if (!secrets.length) return (s) => s;
  return (s) => secrets.reduce((acc, secret) => acc.split(secret).join('[redacted]'), s);
}
