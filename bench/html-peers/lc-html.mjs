// LangChain.js's HTML splitter, RecursiveCharacterTextSplitter.fromLanguage("html")
// (LangChain.js has no HTMLHeaderTextSplitter; the Python one is not run here),
// over every .html and .htm file under DIR, for a side-by-side run with
// `chunk bench -chunker html DIR`.
//
//   node lc-html.mjs --dir DIR [--size 2048] [--overlap 128]
//
// Reads the files into memory first (sorted by path in byte order, as
// `chunk bench` does), times only the splitText calls, and prints the peer
// harness's line on stdout, plus the CPU seconds of those calls:
//   RESULT<TAB>impl<TAB>splitter<TAB>files<TAB>bytes_in<TAB>chunks<TAB>bytes_out<TAB>seconds<TAB>max_chunk_bytes<TAB>cpu_seconds
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RecursiveCharacterTextSplitter } from "@langchain/textsplitters";

const args = { dir: "", size: 2048, overlap: 128 };
for (let i = 2; i < process.argv.length; i += 2) {
  const k = process.argv[i].replace(/^--/, ""), v = process.argv[i + 1];
  if (!(k in args) || v === undefined) throw new Error(`unknown or incomplete argument --${k}`);
  args[k] = typeof args[k] === "number" ? Number(v) : v;
}
if (!args.dir) throw new Error("usage: node lc-html.mjs --dir DIR [--size N] [--overlap N]");

function listFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith(".")) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...listFiles(p));
    else if (e.isFile() && /\.html?$/i.test(e.name)) out.push(p);
  }
  return out;
}

const paths = listFiles(args.dir).sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
let bytesIn = 0;
const docs = paths.map((p) => {
  const b = readFileSync(p);
  bytesIn += b.length;
  return b.toString("utf8");
});

const splitter = RecursiveCharacterTextSplitter.fromLanguage("html", { chunkSize: args.size, chunkOverlap: args.overlap });
if (docs.length > 0) await splitter.splitText(docs[0].slice(0, 2000)); // warm up outside the timer

let chunks = 0, bytesOut = 0, maxChunk = 0, elapsed = 0n, cpu = 0;
for (const d of docs) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const cs = await splitter.splitText(d);
  elapsed += process.hrtime.bigint() - t0;
  const c1 = process.cpuUsage(c0);
  cpu += (c1.user + c1.system) / 1e6;
  chunks += cs.length;
  for (const c of cs) {
    const n = Buffer.byteLength(c, "utf8");
    bytesOut += n;
    if (n > maxChunk) maxChunk = n;
  }
}
const secs = Number(elapsed) / 1e9;
console.log(["RESULT", "node/langchain-textsplitters", `lc-html-${args.size}`, docs.length, bytesIn, chunks, bytesOut, secs.toFixed(6), maxChunk,
  cpu.toFixed(6)].join("\t"));
