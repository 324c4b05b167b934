// Chunks a folder with one peer chunker and writes its chunks, located in
// their files, as JSON Lines: the peer side of the matched-size retrieval
// table (the Go driver in this folder runs it; see its doc comment).
//
//   node peers.mjs --dir DIR --peer NAME --size N [--overlap N] [--ext .md,.mdx] --out FILE
//
// Peers (--size is each one's chunk-size parameter, in characters):
//   lc-recursive       @langchain/textsplitters RecursiveCharacterTextSplitter (chunkSize, chunkOverlap)
//   lc-markdown        @langchain/textsplitters MarkdownTextSplitter           (chunkSize, chunkOverlap)
//   lc-code            RecursiveCharacterTextSplitter.fromLanguage, the language by the file's
//                      extension: go, python, and js for JavaScript and TypeScript (chunkSize, chunkOverlap)
//   lc-html            RecursiveCharacterTextSplitter.fromLanguage("html")     (chunkSize, chunkOverlap)
//   chonkie-recursive  @chonkiejs/core RecursiveChunker, character tokenizer   (chunkSize; no overlap)
//
// Files: those under DIR ending in one of --ext (default .md and .mdx),
// hidden files and folders (names starting with ".") skipped, sorted by
// relative path in byte order, as chunkstream walks a folder. Each output line is
//   {"file": "a/b.md", "start": 10, "end": 250, "text": "..."}
// with the byte range of the chunk in its file, or start and end -1 for a
// chunk that could not be located (locate.mjs). The last line on stdout
// is a summary: {"files": F, "chunks": C, "unlocated": U}.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { locate } from "./locate.mjs";

const args = { dir: "", peer: "", size: 0, overlap: 0, out: "", ext: ".md,.mdx" };
for (let i = 2; i < process.argv.length; i += 2) {
  const k = process.argv[i].replace(/^--/, ""), v = process.argv[i + 1];
  if (!(k in args) || v === undefined) throw new Error(`unknown or incomplete argument ${process.argv[i]}`);
  args[k] = typeof args[k] === "number" ? Number(v) : v;
}
if (!args.dir || !args.peer || !(args.size > 0) || !args.out) {
  throw new Error("usage: node peers.mjs --dir DIR --peer NAME --size N [--overlap N] [--ext .md,.mdx] --out FILE");
}
const exts = args.ext.split(",").map((e) => e.trim().toLowerCase()).filter((e) => e !== "");

function listFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith(".")) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...listFiles(p));
    else if (e.isFile() && exts.some((x) => e.name.toLowerCase().endsWith(x))) out.push(p);
  }
  return out;
}

async function makePeer(name) {
  switch (name) {
    case "lc-recursive": {
      const { RecursiveCharacterTextSplitter } = await import("@langchain/textsplitters");
      const sp = new RecursiveCharacterTextSplitter({ chunkSize: args.size, chunkOverlap: args.overlap });
      return (t) => sp.splitText(t);
    }
    case "lc-markdown": {
      const { MarkdownTextSplitter } = await import("@langchain/textsplitters");
      const sp = new MarkdownTextSplitter({ chunkSize: args.size, chunkOverlap: args.overlap });
      return (t) => sp.splitText(t);
    }
    case "lc-code": {
      const { RecursiveCharacterTextSplitter } = await import("@langchain/textsplitters");
      const byLang = new Map();
      const langOf = (file) => {
        const ext = file.slice(file.lastIndexOf(".")).toLowerCase();
        if (ext === ".go") return "go";
        if ([".py", ".pyi", ".pyw"].includes(ext)) return "python";
        if ([".js", ".jsx", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".tsx"].includes(ext)) return "js";
        throw new Error(`lc-code: no LangChain language for ${file}`);
      };
      return (t, file) => {
        const lang = langOf(file);
        if (!byLang.has(lang)) {
          byLang.set(lang, RecursiveCharacterTextSplitter.fromLanguage(lang, { chunkSize: args.size, chunkOverlap: args.overlap }));
        }
        return byLang.get(lang).splitText(t);
      };
    }
    case "lc-html": {
      const { RecursiveCharacterTextSplitter } = await import("@langchain/textsplitters");
      const sp = RecursiveCharacterTextSplitter.fromLanguage("html", { chunkSize: args.size, chunkOverlap: args.overlap });
      return (t) => sp.splitText(t);
    }
    case "chonkie-recursive": {
      if (args.overlap !== 0) throw new Error("chonkie-recursive has no overlap");
      const { RecursiveChunker } = await import("@chonkiejs/core");
      const c = await RecursiveChunker.create({ chunkSize: args.size });
      return async (t) => (await c.chunk(t)).map((x) => x.text);
    }
  }
  throw new Error(`unknown peer ${name} (known: lc-recursive, lc-markdown, lc-code, lc-html, chonkie-recursive)`);
}

const split = await makePeer(args.peer);
const rel = (p) => relative(args.dir, p).split(sep).join("/");
const files = listFiles(args.dir).map(rel).sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
const lines = [];
let chunks = 0, unlocated = 0;
for (const f of files) {
  const bytes = readFileSync(join(args.dir, f));
  const texts = await split(bytes.toString("utf8"), f);
  const found = locate(bytes, texts);
  texts.forEach((text, i) => {
    const [start, end] = found.spans[i] ?? [-1, -1];
    lines.push(JSON.stringify({ file: f, start, end, text }));
  });
  chunks += texts.length;
  unlocated += found.unlocated;
}
writeFileSync(args.out, lines.length ? lines.join("\n") + "\n" : "");
console.log(JSON.stringify({ files: files.length, chunks, unlocated }));
