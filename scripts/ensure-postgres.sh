#!/usr/bin/env bash
# Installs Debian's Postgres server (package postgresql, which brings
# initdb, pg_ctl and psql under /usr/lib/postgresql/<version>/bin) when
# missing, for the session store's tests: each test starts a throwaway
# cluster of its own in a temporary folder on a loopback port
# (test-support/src/postgres.rs), as the user `nobody` when run as root.
# The package's own cluster is not used: no service is started here.
# Idempotent; runs non-interactively; uses sudo only when not already root.
set -euo pipefail

if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "Postgres is missing; install its server (initdb, pg_ctl) with your package manager, or set OSCOVA_PG_BINDIR" >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
fi
echo "installing: postgresql" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq </dev/null
"${sudo[@]}" apt-get install -y -qq --no-install-recommends postgresql </dev/null >/dev/null
