/**
 * Channel credentials at rest: AES-256-GCM with a 32-byte key from CHANNEL_SECRET_KEY (hex or
 * base64), else one generated once into DATA_DIR/channel-secret.key (mode 0600). Each value
 * is `v1:` + base64(iv (12) | tag (16) | ciphertext), with the channel id as additional
 * authenticated data, so a ciphertext copied onto another row does not decrypt.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { AppError, Code, secretFileIn } from '../kernel/index.js';

export const CHANNEL_KEY_FILE = 'channel-secret.key';
const PREFIX = 'v1:';

/** A 32-byte key from 64 hex digits or base64; throws otherwise. */
export function parseChannelKey(text: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
  if (key.length !== 32) throw new AppError(Code.FailedPrecondition, 'channel secret key must be 32 bytes (64 hex digits or base64)');
  return key;
}

/**
 * The configured key, else the one in `dataDir`/channel-secret.key, created there once
 * (secretFileIn: mode 0600, processes starting together agree on one key).
 */
export function channelKeyOf(secretKey: string | undefined, dataDir: string): Buffer {
  if (secretKey) return parseChannelKey(secretKey);
  return parseChannelKey(secretFileIn(dataDir, CHANNEL_KEY_FILE, () => randomBytes(32).toString('base64')).value);
}

export function encryptCredentials(key: Buffer, channelId: string, credentials: Record<string, string>): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(channelId));
  const ct = Buffer.concat([c.update(JSON.stringify(credentials), 'utf8'), c.final()]);
  return PREFIX + Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64');
}

export function decryptCredentials(key: Buffer, channelId: string, enc: string): Record<string, string> {
  if (!enc.startsWith(PREFIX)) throw new AppError(Code.Internal, 'channel credentials: unknown format');
  const raw = Buffer.from(enc.slice(PREFIX.length), 'base64');
  const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  d.setAAD(Buffer.from(channelId));
  d.setAuthTag(raw.subarray(12, 28));
  try {
    return JSON.parse(Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8')) as Record<string, string>;
  } catch {
    // Never the values in the message: a wrong key (CHANNEL_SECRET_KEY changed) or a tampered row.
    throw new AppError(Code.Internal, 'channel credentials cannot be decrypted (wrong CHANNEL_SECRET_KEY?)');
  }
}
