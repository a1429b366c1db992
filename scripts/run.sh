#!/bin/sh
# The one switch between development and production for the long-running services:
# `npm run worker | api | outbox-dispatcher | receipts` run `sh scripts/run.sh <service> [args]`.
#
#   NODE_ENV=production  plain node on the compiled dist/ (npm run build); no tsx at run time.
#                        The worker also gets its memory defaults (below), each one only when
#                        the environment does not already set it.
#   anything else        tsx on the TypeScript in src/, as in development.
#
# RUN_FROM=dist or RUN_FROM=src overrides that choice of code (and only that): `npm run soak` runs
# its workers as `RUN_FROM=dist sh scripts/run.sh worker`, the production build with the
# production memory defaults, without NODE_ENV=production (which refuses the soak's short
# retention horizons).
#
# The service replaces this shell (exec), so the process npm waits on is the service itself:
# signals reach it directly, and no launcher process holds memory beside it.
set -eu

service=${1:-}
[ "$#" -gt 0 ] && shift
case "$service" in
  worker) entry=worker ;;
  api) entry=api ;;
  outbox-dispatcher) entry=outbox-dispatcher ;;
  receipts) entry=receipts ;;
  *)
    echo "scripts/run.sh: unknown service '$service': use worker, api, outbox-dispatcher or receipts" >&2
    exit 2
    ;;
esac
root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
# The node that runs npm, as npm names it; plain `node` when run by hand.
node=${npm_node_execpath:-node}

from=${RUN_FROM:-}
if [ -z "$from" ]; then
  if [ "${NODE_ENV:-}" = production ]; then from=dist; else from=src; fi
fi
case "$from" in
  dist|src) ;;
  *)
    echo "scripts/run.sh: RUN_FROM must be dist or src, got '$from'" >&2
    exit 2
    ;;
esac

if [ "$from" = src ]; then
  if [ ! -x "$root/node_modules/.bin/tsx" ]; then
    echo "$service: tsx is not installed (npm ci installs it); to run the build in dist/, set NODE_ENV=production" >&2
    exit 2
  fi
  exec "$root/node_modules/.bin/tsx" "$root/src/$entry.ts" "$@"
fi

if [ ! -f "$root/dist/$entry.js" ]; then
  echo "$service: no production build (dist/$entry.js is missing): run npm run build first" >&2
  exit 2
fi
if [ "$service" != worker ]; then
  exec "$node" "$root/dist/$entry.js" "$@"
fi

# The worker's memory defaults, measured with 1,000 sagas in flight (bench/production-worker.ts;
# README, Operator's guide). V8 otherwise lets garbage grow to a multiple of what is live, and
# glibc keeps a malloc arena per thread (the Temporal core runs many). Setting any of them in
# NODE_OPTIONS, or MALLOC_ARENA_MAX in the environment, replaces that default; glibc reads
# MALLOC_ARENA_MAX when the process starts, which is why it is set here and not by the worker.
export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
flags=''
case " ${NODE_OPTIONS:-} " in
  *--max-old-space-size*|*--max_old_space_size*) ;;
  *) flags="$flags --max-old-space-size=160" ;;
esac
case " ${NODE_OPTIONS:-} " in
  *--max-semi-space-size*|*--max_semi_space_size*) ;;
  *) flags="$flags --max-semi-space-size=12" ;;
esac
# $flags is unquoted on purpose: it is zero or more whole flags, none with spaces.
# shellcheck disable=SC2086
exec "$node" $flags "$root/dist/worker.js" "$@"
