/**
 * JWTs (HS256, jose): short-lived access tokens and refresh tokens with rotation. Each refresh
 * revokes the token it used and issues a new one in the same family (the refresh_tokens
 * table), so that a rotated token presented again can revoke the whole family.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { AppError, unauthenticated } from '../kernel/index.js';
import type { Sql } from '../store/index.js';
import type { UserRow } from './users.js';

export interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_expires_in: number;
}

export interface TokenOptions {
  jwtSecret: string;
  accessTtlSeconds: number;
  refreshTtlSeconds: number;
}

const ISSUER = 'taskorch';

export class TokenIssuer {
  private readonly secret: Uint8Array;
  constructor(
    private readonly sql: Sql,
    private readonly opts: TokenOptions,
  ) {
    this.secret = new TextEncoder().encode(opts.jwtSecret);
  }

  /** A new access and refresh token; `replaces` is the refresh token this one rotates out. */
  async issue(user: UserRow, familyId: string = randomUUID(), replaces?: string): Promise<Tokens> {
    const now = Math.floor(Date.now() / 1000);
    const jti = randomUUID();
    const access = await new SignJWT({ tid: user.tenant_id, typ: 'access', email: user.email })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(user.id)
      .setIssuer(ISSUER)
      .setIssuedAt(now)
      .setExpirationTime(now + this.opts.accessTtlSeconds)
      .setJti(randomUUID())
      .sign(this.secret);
    const refresh = await new SignJWT({ tid: user.tenant_id, typ: 'refresh', fam: familyId })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(user.id)
      .setIssuer(ISSUER)
      .setIssuedAt(now)
      .setExpirationTime(now + this.opts.refreshTtlSeconds)
      .setJti(jti)
      .sign(this.secret);
    const expiresAt = new Date((now + this.opts.refreshTtlSeconds) * 1000);
    await this.sql.begin(async (tx) => {
      if (replaces) await tx`UPDATE refresh_tokens SET revoked_at = now(), replaced_by = ${jti}::uuid WHERE id = ${replaces}::uuid`;
      await tx`INSERT INTO refresh_tokens (id, user_id, family_id, expires_at) VALUES (${jti}, ${user.id}, ${familyId}, ${expiresAt})`;
    });
    return {
      access_token: access,
      refresh_token: refresh,
      token_type: 'Bearer',
      expires_in: this.opts.accessTtlSeconds,
      refresh_expires_in: this.opts.refreshTtlSeconds,
    };
  }

  async verify(token: string, typ: 'access' | 'refresh') {
    try {
      const { payload } = await jwtVerify(token, this.secret, { issuer: ISSUER, algorithms: ['HS256'] });
      if (payload.typ !== typ || !payload.sub) throw unauthenticated('Invalid or expired token');
      return payload;
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (err instanceof joseErrors.JOSEError || err instanceof TypeError) throw unauthenticated('Invalid or expired token');
      throw err;
    }
  }
}
