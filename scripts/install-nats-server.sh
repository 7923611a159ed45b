#!/usr/bin/env bash
# Installs nats-server 2.10 or newer with apt (root, Debian or Debian-based images): Debian stable
# (bookworm) ships 2.9.10, which lacks JetStream's sync_interval and has clustering defects fixed
# since; Debian trixie ships 2.10.x as a static binary. So this adds trixie as an apt source
# pinned to the `nats-server` package alone (every other package keeps coming from the system's
# own release: trixie's pin priority is 1 for all else), and installs it. When trixie cannot be
# reached it removes that source again and installs the system's own nats-server, with a warning
# about what 2.9 means for durability (deploy/README.md). Already 2.10+: nothing to do.
# Used by `.ci/run`, `deploy/Dockerfile` and `scripts/ensure-nats.mjs`.
set -euo pipefail

SOURCE=/etc/apt/sources.list.d/taskorch-trixie-nats-server.sources
PIN=/etc/apt/preferences.d/taskorch-trixie-nats-server
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
export DEBIAN_FRONTEND=noninteractive

find_nats() {
  command -v nats-server 2>/dev/null && return 0
  for p in /usr/sbin/nats-server /usr/bin/nats-server /usr/local/bin/nats-server; do
    [ -x "$p" ] && echo "$p" && return 0
  done
  return 1
}

# Prints the installed version (e.g. 2.10.27), or nothing.
installed_version() {
  local bin
  bin=$(find_nats) || return 0
  "$bin" --version 2>/dev/null | sed -n 's/.*v\([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\).*/\1/p'
}

recent() {
  local v major minor
  v=$(installed_version)
  [ -n "$v" ] || return 1
  major=${v%%.*}
  minor=${v#*.}
  minor=${minor%%.*}
  [ "$major" -gt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -ge 10 ]; }
}

if recent; then
  echo "nats-server $(installed_version) is installed"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "nats-server 2.10 or newer is needed: install Debian trixie's nats-server package, or the binary from https://github.com/nats-io/nats-server/releases, on PATH (NATS_SERVER_BIN names another place)" >&2
  [ -n "$(installed_version)" ] && exit 0 # an older server still runs the service, with less durability
  exit 1
fi

if [ -f "$KEYRING" ]; then
  cat >"$SOURCE" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: $KEYRING
SRC
  cat >"$PIN" <<'PINS'
Package: *
Pin: release n=trixie
Pin-Priority: 1

Package: nats-server
Pin: release n=trixie
Pin-Priority: 990
PINS
  if apt-get update && apt-get install -y --no-install-recommends nats-server && recent; then
    echo "nats-server $(installed_version) installed from Debian trixie (pinned to that package alone)"
    exit 0
  fi
  rm -f "$SOURCE" "$PIN"
fi

echo "WARNING: could not install nats-server 2.10+ from Debian trixie; installing the system's own nats-server. Before 2.10 JetStream has no sync_interval: an acknowledged write survives a crash of the server but not a power loss (fsync every 2 minutes); see deploy/README.md." >&2
apt-get update
apt-get install -y --no-install-recommends nats-server
echo "nats-server $(installed_version) installed"
