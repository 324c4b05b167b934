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
// document is its complete version of the highest ingest_seq. A document is
// its tenant and id: two tenants' documents of one id are two documents.
class View {
  current = new Map(); // key -> {doc_id, tenant, ingest_seq, deleted, chunks}
  pending = new Map(); // key -> Map(ingest_seq -> {count, records: Map(position -> record)})

  // key names a record's document: its tenant ("" for none) and its id
  // (a tenant name holds no NUL).
  static key(r) {
    return `${r.tenant ?? ""}\u0000${r.doc_id}`;
  }

  apply(r) {
    const seq = BigInt(r.ingest_seq);
    const k = View.key(r);
    const cur = this.current.get(k);
    if (cur && seq <= BigInt(cur.ingest_seq)) return false; // superseded, or a copy
    const doc = { doc_id: r.doc_id, tenant: r.tenant ?? "", ingest_seq: r.ingest_seq };
    if (r.op === "delete") {
      this.complete(k, { ...doc, deleted: true, chunks: [] });
      return true;
    }
    let versions = this.pending.get(k);
    if (!versions) this.pending.set(k, (versions = new Map()));
    let p = versions.get(seq);
    if (!p) versions.set(seq, (p = { count: r.count, records: new Map() }));
    p.records.set(r.position, r);
    if (p.records.size < p.count) return false;
    const chunks = [];
    for (let i = 0; i < p.count; i++) chunks.push(p.records.get(i));
    this.complete(k, { ...doc, chunks });
    return true;
  }

  complete(k, version) {
    this.current.set(k, version);
    const versions = this.pending.get(k);
    if (!versions) return;
    for (const seq of versions.keys()) {
      if (seq <= BigInt(version.ingest_seq)) versions.delete(seq);
    }
    if (versions.size === 0) this.pending.delete(k);
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
const keys = [...view.current.keys()].sort();
for (const k of keys) {
  const v = view.current.get(k);
  const out = { doc_id: v.doc_id, ingest_seq: Number(v.ingest_seq), chunks: v.chunks.map((c) => ({ position: Number(c.position), hash: c.hash })) };
  if (v.tenant !== "") out.tenant = v.tenant;
  if (v.deleted) out.deleted = true;
  console.log(JSON.stringify(out));
}
console.error(`consumer: ${read} records, ${view.current.size} documents`);
await nc.close();
