// LangChain.js's code splitter (RecursiveCharacterTextSplitter.fromLanguage)
// over a list of source files, the contender of the code chunker's
// side-by-side test and benchmark, and TypeScript's parser as the oracle of
// where JavaScript and TypeScript declarations are.
//
//   node lc-code.mjs --dir DIR --files LIST --lang go|python|js [--size 2048] [--overlap 0]
//                    [--out FILE] [--decls]
//
// LIST names the files to read, one path relative to DIR a line (the Go test
// writes it, so both sides read the same files). Reads every file into memory
// first, then times only the splitText calls, one document after the other,
// and prints one line on stdout, the fields of `chunk bench` plus CPU time:
//   RESULT<TAB>impl<TAB>splitter<TAB>files<TAB>bytes_in<TAB>chunks<TAB>bytes_out<TAB>seconds<TAB>max_chunk_bytes<TAB>cpu_seconds
// With --out, writes one JSON line per file: {"file", "chunks": [[start, end], ...]}
// (byte offsets of each chunk in the file: LangChain trims its chunks, so each
// is found after the previous one) and, with --decls (js only), "decls": the
// byte ranges of every function, class, method, constructor, accessor,
// interface, enum, type alias and namespace, without leading comments, as
// TypeScript's parser finds them, and "tokens": the byte ranges of the tokens
// that span lines (string, template and regular expression literals, block
// comments), inside which no chunk may start.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RecursiveCharacterTextSplitter } from "@langchain/textsplitters";

const args = { dir: "", files: "", lang: "", size: 2048, overlap: 0, out: "", decls: false };
for (let i = 2; i < process.argv.length; i++) {
  const k = process.argv[i].replace(/^--/, "");
  if (!(k in args)) throw new Error(`unknown argument --${k}`);
  if (typeof args[k] === "boolean") { args[k] = true; continue; }
  const v = process.argv[++i];
  if (v === undefined) throw new Error(`--${k} needs a value`);
  args[k] = typeof args[k] === "number" ? Number(v) : v;
}
if (!args.dir || !args.files || !args.lang) {
  throw new Error("usage: node lc-code.mjs --dir DIR --files LIST --lang go|python|js [--size N] [--overlap N] [--out FILE] [--decls]");
}

const paths = readFileSync(args.files, "utf8").split("\n").filter((l) => l !== "");
let bytesIn = 0;
const docs = paths.map((p) => {
  const b = readFileSync(join(args.dir, p));
  bytesIn += b.length;
  return b.toString("utf8");
});

const splitter = RecursiveCharacterTextSplitter.fromLanguage(args.lang, { chunkSize: args.size, chunkOverlap: args.overlap });
if (docs.length > 0) await splitter.splitText(docs[0].slice(0, 2000)); // warm up outside the timer

const results = [];
let chunks = 0, bytesOut = 0, maxChunk = 0, elapsed = 0n, cpu = 0;
for (const d of docs) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const cs = await splitter.splitText(d);
  elapsed += process.hrtime.bigint() - t0;
  const c1 = process.cpuUsage(c0);
  cpu += (c1.user + c1.system) / 1e6;
  results.push(cs);
  chunks += cs.length;
  for (const c of cs) {
    const n = Buffer.byteLength(c, "utf8");
    bytesOut += n;
    if (n > maxChunk) maxChunk = n;
  }
}
console.log(["RESULT", "node/langchain-textsplitters", `fromLanguage-${args.lang}`, docs.length, bytesIn, chunks, bytesOut,
  (Number(elapsed) / 1e9).toFixed(6), maxChunk, cpu.toFixed(6)].join("\t"));

if (args.out) {
  const ts = args.decls ? (await import("typescript")).default : null;
  const lines = [];
  for (let i = 0; i < docs.length; i++) {
    const text = docs[i];
    const bytesAt = byteOffsets(text);
    const spans = [];
    let from = 0;
    for (const c of results[i]) {
      let at = text.indexOf(c, Math.max(0, from - args.overlap));
      if (at < 0) at = text.indexOf(c);
      if (at < 0) { spans.push(null); continue; }
      spans.push([bytesAt(at), bytesAt(at + c.length)]);
      from = at + c.length;
    }
    const line = { file: paths[i], chunks: spans };
    if (ts) {
      const { decls, tokens } = parseFacts(ts, paths[i], text);
      line.decls = decls.map(([s, e]) => [bytesAt(s), bytesAt(e)]);
      line.tokens = tokens.map(([s, e]) => [bytesAt(s), bytesAt(e)]);
    }
    lines.push(JSON.stringify(line));
  }
  writeFileSync(args.out, lines.join("\n") + "\n");
}

// byteOffsets returns a function from UTF-16 offsets of text to UTF-8 byte
// offsets.
function byteOffsets(text) {
  const at = new Uint32Array(text.length + 1);
  let b = 0;
  for (let i = 0; i < text.length; i++) {
    at[i] = b;
    const c = text.charCodeAt(i);
    if (c < 0x80) b += 1;
    else if (c < 0x800) b += 2;
    else if (c >= 0xd800 && c <= 0xdbff) { b += 4; at[++i] = b - 4; }
    else b += 3;
  }
  at[text.length] = b;
  return (i) => at[i];
}

// parseFacts returns, as [start, end) UTF-16 ranges of a JavaScript or
// TypeScript file, its declarations at any depth (decls) and the tokens
// that span lines (tokens: string, template and regular expression
// literals and their parts, and block comments), where no cut may fall.
function parseFacts(ts, path, text) {
  const kind = path.endsWith(".tsx") ? ts.ScriptKind.TSX : path.endsWith(".ts") ? ts.ScriptKind.TS
    : path.endsWith(".jsx") ? ts.ScriptKind.JSX : ts.ScriptKind.JS;
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  const K = ts.SyntaxKind;
  const wanted = new Set([K.FunctionDeclaration, K.ClassDeclaration, K.MethodDeclaration, K.Constructor, K.GetAccessor,
    K.SetAccessor, K.InterfaceDeclaration, K.EnumDeclaration, K.TypeAliasDeclaration, K.ModuleDeclaration]);
  const literals = new Set([K.StringLiteral, K.NoSubstitutionTemplateLiteral, K.TemplateHead, K.TemplateMiddle,
    K.TemplateTail, K.RegularExpressionLiteral]);
  const decls = [], tokens = [], seen = new Set();
  const multiLine = (s, e) => text.slice(s, e).includes("\n");
  const comments = (ranges) => {
    for (const r of ranges ?? []) {
      if (r.kind === K.MultiLineCommentTrivia && !seen.has(r.pos) && multiLine(r.pos, r.end)) {
        seen.add(r.pos);
        tokens.push([r.pos, r.end]);
      }
    }
  };
  const visit = (n) => {
    if (wanted.has(n.kind)) decls.push([n.getStart(sf), n.end]);
    if (literals.has(n.kind) && multiLine(n.getStart(sf), n.end)) tokens.push([n.getStart(sf), n.end]);
    comments(ts.getLeadingCommentRanges(text, n.pos));
    comments(ts.getTrailingCommentRanges(text, n.end));
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return { decls, tokens };
}
