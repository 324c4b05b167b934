// LangChain.js's MarkdownTextSplitter with a token length function (OpenAI's
// tokenizer, js-tiktoken), the token-budget contender of the peer benchmark.
//
//   node lc-markdown-tiktoken.mjs --dir DIR [--size 512] [--overlap 64] [--encoding cl100k_base]
//
// Reads every regular file under DIR into memory first (sorted by path in
// byte order, as the peer harness and `chunk bench` do), then times only the
// splitText calls, one document after the other, and prints the harness's
// line on stdout:
//   RESULT<TAB>impl<TAB>splitter<TAB>files<TAB>bytes_in<TAB>chunks<TAB>bytes_out<TAB>seconds<TAB>max_chunk_bytes
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MarkdownTextSplitter } from "@langchain/textsplitters";
import { getEncoding } from "js-tiktoken";

const args = { dir: "", size: 512, overlap: 64, encoding: "cl100k_base" };
for (let i = 2; i < process.argv.length; i += 2) {
  const k = process.argv[i].replace(/^--/, ""), v = process.argv[i + 1];
  if (!(k in args) || v === undefined) throw new Error(`unknown or incomplete argument --${k}`);
  args[k] = typeof args[k] === "number" ? Number(v) : v;
}
if (!args.dir) throw new Error("usage: node lc-markdown-tiktoken.mjs --dir DIR [--size N] [--overlap N] [--encoding NAME]");

function listFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...listFiles(p));
    else if (e.isFile()) out.push(p);
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

const enc = getEncoding(args.encoding);
// Special-token text ("<|endoftext|>") is counted as plain text, as the Go
// counter counts it, instead of throwing.
const tokens = (text) => enc.encode(text, [], []).length;
const splitter = new MarkdownTextSplitter({ chunkSize: args.size, chunkOverlap: args.overlap, lengthFunction: tokens });
if (docs.length > 0) await splitter.splitText(docs[0].slice(0, 2000)); // load lazily built tables outside the timer

let chunks = 0, bytesOut = 0, maxChunk = 0, failures = 0, elapsed = 0n;
for (const d of docs) {
  let cs;
  const t0 = process.hrtime.bigint();
  try {
    cs = await splitter.splitText(d);
  } catch {
    failures++;
    continue;
  } finally {
    elapsed += process.hrtime.bigint() - t0;
  }
  chunks += cs.length;
  for (const c of cs) {
    const n = Buffer.byteLength(c, "utf8");
    bytesOut += n;
    if (n > maxChunk) maxChunk = n;
  }
}
if (failures) console.error(`warning: ${failures} documents threw`);
const secs = Number(elapsed) / 1e9;
console.log(["RESULT", "node/langchain-textsplitters+js-tiktoken", `lc-markdown-tiktoken-${args.encoding}`, docs.length, bytesIn, chunks, bytesOut, secs.toFixed(6), maxChunk].join("\t"));
