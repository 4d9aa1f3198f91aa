#!/bin/sh
# Entry point of the neuraphage image: runs `neuraphage "$@"`. For
# `worker`, the coordinator's URL and this worker's token may come from the
# environment (NEURAPHAGE_JOIN_URL, NEURAPHAGE_JOIN_TOKEN): the token is
# handed on as NEURAPHAGE_WORKER_TOKEN, never as an argument (arguments are
# visible to every user of the machine in ps).
set -eu
if [ "${1:-}" = worker ] && [ "${2:-}" != drain ]; then
	shift
	if [ -n "${NEURAPHAGE_JOIN_TOKEN:-}" ]; then
		NEURAPHAGE_WORKER_TOKEN=$NEURAPHAGE_JOIN_TOKEN
		export NEURAPHAGE_WORKER_TOKEN
	fi
	unset NEURAPHAGE_JOIN_TOKEN
	if [ -n "${NEURAPHAGE_JOIN_URL:-}" ]; then
		set -- --join "$NEURAPHAGE_JOIN_URL" "$@"
	fi
	if [ -n "${NEURAPHAGE_WORKER_LABELS:-}" ]; then
		set -- --labels "$NEURAPHAGE_WORKER_LABELS" "$@"
	fi
	if [ -n "${NEURAPHAGE_WORKER_CAPACITY:-}" ]; then
		set -- --capacity "$NEURAPHAGE_WORKER_CAPACITY" "$@"
	fi
	set -- worker "$@"
fi
exec "${NEURAPHAGE_BIN:-/usr/local/bin/neuraphage}" "$@"
