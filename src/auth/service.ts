/**
 * AuthService: users, tenants, API keys and JWTs behind one object, and the gateway's
 * Authenticator: `X-API-Key`, or `Authorization: Bearer` with an API key or an access token
 * (and the `api_key` query parameter on SSE only).
 */
import { unauthenticated, type Logger, type Principal } from '../kernel/index.js';
import type { Sql } from '../store/index.js';
import { Accounts } from './accounts.js';
import { ApiKeys } from './api-keys.js';
import { credentialOf, type AuthInput, type Authenticator } from './credentials.js';
import type { ScryptParams } from './passwords.js';
import { TokenIssuer } from './tokens.js';

export interface AuthOptions {
  jwtSecret: string;
  accessTtlSeconds: number;
  refreshTtlSeconds: number;
  apiKeyCacheSeconds?: number;
  scrypt?: ScryptParams;
}

export class AuthService implements Authenticator {
  private readonly tokens: TokenIssuer;
  private readonly accounts: Accounts;
  private readonly keys: ApiKeys;

  constructor(sql: Sql, opts: AuthOptions, log: Logger) {
    this.tokens = new TokenIssuer(sql, opts);
    this.accounts = new Accounts(sql, this.tokens, log, opts.scrypt);
    this.keys = new ApiKeys(sql, opts.apiKeyCacheSeconds);
  }

  register(input: { email?: unknown; password?: unknown; name?: unknown; tenant_name?: unknown }) {
    return this.accounts.register(input);
  }
  login(input: { email?: unknown; password?: unknown }) {
    return this.accounts.login(input);
  }
  refresh(input: { refresh_token?: unknown }) {
    return this.accounts.refresh(input);
  }
  me(p: Principal) {
    return this.accounts.me(p);
  }

  createApiKey(p: Principal, input: { name?: unknown; expires_in_days?: unknown }) {
    return this.keys.create(p, input);
  }
  listApiKeys(p: Principal) {
    return this.keys.list(p);
  }
  revokeApiKey(p: Principal, id: string) {
    return this.keys.revoke(p, id);
  }
  /** Revokes the user's default key and issues a new one. */
  regenerateDefaultKey(p: Principal) {
    return this.keys.regenerateDefault(p);
  }

  async authenticate(input: AuthInput): Promise<Principal> {
    const cred = credentialOf(input);
    if (!cred) throw unauthenticated();
    if (cred.startsWith('sk_')) return this.keys.verify(cred);
    const claims = await this.tokens.verify(cred, 'access');
    return { userId: claims.sub as string, tenantId: claims.tid as string, key: `user:${claims.sub}`, anonymous: false };
  }
}
