#!/bin/sh
# Idempotent creation of the INGEST stream and the "chunkers" consumer with
# the settings the workers' set-up uses (topology/config.go; the test
# worker/clustertest runs these here-documents and then the set-up, which
# must accept them unchanged).
# Reads the same variables as the worker; the nats CLI takes NATS_URL,
# NATS_USER, NATS_PASSWORD, NATS_CREDS, NATS_CERT, NATS_KEY and NATS_CA.
set -eu

: "${NATS_URL:=nats://127.0.0.1:4222}"
: "${CHUNKSTREAM_INGEST_STREAM:=INGEST}"
: "${CHUNKSTREAM_INGEST_SUBJECTS:=ingest.>}"
: "${CHUNKSTREAM_CONSUMER:=chunkers}"
: "${CHUNKSTREAM_REPLICAS:=1}"
export NATS_URL
[ -n "${CHUNKSTREAM_NATS_USER:-}" ] && export NATS_USER="$CHUNKSTREAM_NATS_USER"
[ -n "${CHUNKSTREAM_NATS_PASSWORD:-}" ] && export NATS_PASSWORD="$CHUNKSTREAM_NATS_PASSWORD"
[ -n "${CHUNKSTREAM_NATS_CREDS:-}" ] && export NATS_CREDS="$CHUNKSTREAM_NATS_CREDS"
[ -n "${CHUNKSTREAM_NATS_TLS_CERT:-}" ] && export NATS_CERT="$CHUNKSTREAM_NATS_TLS_CERT"
[ -n "${CHUNKSTREAM_NATS_TLS_KEY:-}" ] && export NATS_KEY="$CHUNKSTREAM_NATS_TLS_KEY"
[ -n "${CHUNKSTREAM_NATS_TLS_CA:-}" ] && export NATS_CA="$CHUNKSTREAM_NATS_TLS_CA"

# Wait for JetStream (the cluster may still be electing a meta leader).
i=0
until nats account info >/dev/null 2>&1; do
  i=$((i + 1))
  [ "$i" -ge 60 ] && { echo "bootstrap: JetStream not reachable at $NATS_URL" >&2; exit 1; }
  sleep 5
done

# A comma-separated subject list becomes a JSON string list.
CHUNKSTREAM_INGEST_SUBJECTS_JSON=$(printf '%s' "$CHUNKSTREAM_INGEST_SUBJECTS" | sed 's/,/","/g')

# Durations are nanoseconds in the JetStream API: 2m duplicate window,
# 30s ack wait.
cat > /tmp/stream.json <<JSON
{
  "name": "${CHUNKSTREAM_INGEST_STREAM}",
  "description": "chunkstream ingest requests",
  "subjects": ["${CHUNKSTREAM_INGEST_SUBJECTS_JSON}"],
  "retention": "workqueue",
  "storage": "file",
  "discard": "old",
  "num_replicas": ${CHUNKSTREAM_REPLICAS},
  "duplicate_window": 120000000000,
  "max_consumers": -1,
  "max_msgs": -1,
  "max_bytes": -1,
  "max_age": 0,
  "max_msg_size": -1,
  "max_msgs_per_subject": -1,
  "allow_direct": true,
  "allow_batched": true
}
JSON
cat > /tmp/consumer.json <<JSON
{
  "durable_name": "${CHUNKSTREAM_CONSUMER}",
  "description": "chunkstream workers",
  "deliver_policy": "all",
  "ack_policy": "explicit",
  "ack_wait": 30000000000,
  "max_deliver": -1,
  "max_ack_pending": 10000,
  "replay_policy": "instant",
  "num_replicas": ${CHUNKSTREAM_REPLICAS}
}
JSON

if nats stream info "${CHUNKSTREAM_INGEST_STREAM}" >/dev/null 2>&1; then
  echo "bootstrap: stream $CHUNKSTREAM_INGEST_STREAM exists"
else
  nats stream add "${CHUNKSTREAM_INGEST_STREAM}" --config /tmp/stream.json
fi
if nats consumer info "${CHUNKSTREAM_INGEST_STREAM}" "$CHUNKSTREAM_CONSUMER" >/dev/null 2>&1; then
  echo "bootstrap: consumer $CHUNKSTREAM_CONSUMER exists"
else
  nats consumer add "${CHUNKSTREAM_INGEST_STREAM}" "$CHUNKSTREAM_CONSUMER" --config /tmp/consumer.json
fi
