/**
 * Users, tenants, API keys and JWTs.
 *
 * - Passwords: scrypt (memory-hard), see passwords.ts.
 * - API keys: `sk_` + 32 random base64url characters; only their SHA-256 is stored; the key is
 *   shown once, at creation. Revoked or expired keys stop working at once in the process that
 *   revoked them and within API_KEY_CACHE_SECONDS (5 s) in every other gateway.
 * - JWTs (HS256, jose): short-lived access tokens and refresh tokens with rotation: each
 *   refresh revokes the token it used and issues a new one in the same family; presenting a
 *   revoked refresh token again revokes the whole family (token theft detection).
 *
 * AuthService is the gateway's Authenticator: `X-API-Key`, or `Authorization: Bearer` with an
 * API key or an access token (and the `api_key` query parameter on SSE only).
 */
export { AuthService, type AuthOptions } from './service.js';
export { createAuthenticator, credentialOf, type AuthInput, type Authenticator } from './credentials.js';
export { hashKey, newApiKey } from './api-keys.js';
export type { Tokens } from './tokens.js';
export { userJson, type UserRow } from './users.js';
