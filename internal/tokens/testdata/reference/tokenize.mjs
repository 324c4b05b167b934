// Reference token ids for the Go tests: reads one JSON object
//   {"encoding": "cl100k_base", "texts": ["...", ...]}
// on stdin and writes {"ids": [[...], ...]} (the token ids of each text, by
// OpenAI's tokenizer js-tiktoken) on stdout.
import { getEncoding } from "js-tiktoken";

let input = "";
process.stdin.setEncoding("utf8");
for await (const part of process.stdin) input += part;
const req = JSON.parse(input);
const enc = getEncoding(req.encoding);
const ids = req.texts.map((t) => enc.encode(t));
process.stdout.write(JSON.stringify({ ids }));
