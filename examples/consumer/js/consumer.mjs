// An example consumer of chunkstream's CHUNKS stream with the official NATS
// client: it reads the stream from its first record, rebuilds the current
// chunk set of every document by the rule of docs/wire.md ("Reading
// CHUNKS") and prints one JSON line per document once it has read every
// record stored when it started.
//
//   npm install && node consumer.mjs nats://127.0.0.1:4222
import { connect } from "@nats-io/transport-node";
import { jetstream, DeliverPolicy } from "@nats-io/jetstream";
import { decode } from "@msgpack/msgpack";

const server = process.argv[2] ?? "nats://127.0.0.1:4222";
const stream = process.argv[3] ?? "CHUNKS";

// View applies the rule: a version is complete once all `count` of its
// records (or its delete record) were read; the current version of a
// document is its complete version of the highest ingest_seq.
class View {
  current = new Map(); // doc_id -> {doc_id, ingest_seq, deleted, chunks}
  pending = new Map(); // doc_id -> Map(ingest_seq -> {count, records: Map(position -> record)})

  apply(r) {
    const seq = BigInt(r.ingest_seq);
    const cur = this.current.get(r.doc_id);
    if (cur && seq <= BigInt(cur.ingest_seq)) return false; // superseded, or a copy
    if (r.op === "delete") {
      this.complete({ doc_id: r.doc_id, ingest_seq: r.ingest_seq, deleted: true, chunks: [] });
      return true;
    }
    let versions = this.pending.get(r.doc_id);
    if (!versions) this.pending.set(r.doc_id, (versions = new Map()));
    let p = versions.get(seq);
    if (!p) versions.set(seq, (p = { count: r.count, records: new Map() }));
    p.records.set(r.position, r);
    if (p.records.size < p.count) return false;
    const chunks = [];
    for (let i = 0; i < p.count; i++) chunks.push(p.records.get(i));
    this.complete({ doc_id: r.doc_id, ingest_seq: r.ingest_seq, chunks });
    return true;
  }

  complete(version) {
    this.current.set(version.doc_id, version);
    const versions = this.pending.get(version.doc_id);
    if (!versions) return;
    for (const seq of versions.keys()) {
      if (seq <= BigInt(version.ingest_seq)) versions.delete(seq);
    }
    if (versions.size === 0) this.pending.delete(version.doc_id);
  }
}

// decodeRecord reads a record by its Content-Type, as docs/wire.md says:
// JSON when it says application/json, msgpack otherwise.
function decodeRecord(m) {
  const ct = (m.headers?.get("Content-Type") ?? "").toLowerCase();
  if (ct.startsWith("application/json")) return JSON.parse(new TextDecoder().decode(m.data));
  return decode(m.data, { useBigInt64: true });
}

const nc = await connect({ servers: server, name: "chunkstream-example-consumer-js" });
const js = jetstream(nc);
// An ordered consumer reads the stream in order from its first record.
const consumer = await js.consumers.get(stream, { deliver_policy: DeliverPolicy.All });
const info = await consumer.info();
let left = info.num_pending;
const view = new View();
let read = 0;
if (left > 0) {
  const messages = await consumer.consume();
  for await (const m of messages) {
    view.apply(decodeRecord(m));
    read++;
    if (--left === 0) break;
  }
}
const ids = [...view.current.keys()].sort();
for (const id of ids) {
  const v = view.current.get(id);
  const out = { doc_id: v.doc_id, ingest_seq: Number(v.ingest_seq), chunks: v.chunks.map((c) => ({ position: Number(c.position), hash: c.hash })) };
  if (v.deleted) out.deleted = true;
  console.log(JSON.stringify(out));
}
console.error(`consumer: ${read} records, ${view.current.size} documents`);
await nc.close();
