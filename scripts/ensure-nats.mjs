#!/usr/bin/env node
// Makes sure a NATS server with JetStream is available before tests or start:
// NATS_URL set → nothing to do; nats-server found (same search as
// src/embedded/nats-server.ts) → nothing to do; root with apt-get → install it;
// otherwise print what to do and exit 1. The install takes nats-server 2.10+ where it can
// (scripts/install-nats-server.sh).
import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const INSTRUCTION =
  'nats-server not found: run `sudo bash scripts/install-nats-server.sh` (Debian/Ubuntu: 2.10+ from Debian trixie, pinned to that package alone), or put a nats-server 2.10+ binary on PATH, or set NATS_URL to an existing server with JetStream';

function isExecutableFile(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function findNatsServer() {
  const fromEnv = process.env.NATS_SERVER_BIN;
  if (fromEnv) return isExecutableFile(fromEnv) ? fromEnv : undefined;
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/sbin', '/usr/bin', '/usr/local/bin'];
  return dirs.map((dir) => join(dir, 'nats-server')).find(isExecutableFile);
}

function findOnPath(name) {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((d) => join(d, name))
    .find(isExecutableFile);
}

if (process.env.NATS_URL) process.exit(0);
if (findNatsServer()) process.exit(0);

if (process.getuid?.() === 0 && findOnPath('apt-get')) {
  // 2.10+ from Debian trixie (pinned to nats-server alone), else the system's own with a warning.
  console.error('nats-server not found; installing it with apt-get (scripts/install-nats-server.sh)…');
  const script = fileURLToPath(new URL('./install-nats-server.sh', import.meta.url));
  const install = spawnSync('bash', [script], { stdio: 'inherit' });
  if (install.status === 0 && findNatsServer()) process.exit(0);
  console.error('installing nats-server with apt-get failed.');
}

console.error(INSTRUCTION);
process.exit(1);
