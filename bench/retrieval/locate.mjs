// Span locating for the peer chunkers, which return text only: each chunk
// is found in its file's bytes by searching forward from the start of the
// previous chunk found (one byte past it, so that a chunk repeating the
// previous one is found at its own place), in bytes. A chunk that is not
// a substring of the file from there (a peer that changed the text) is
// unlocated: it gets no span and is counted.

/**
 * Locates chunks in a file.
 * @param {Buffer} file the file's bytes
 * @param {string[]} texts the chunks, in the order the peer gave them
 * @returns {{spans: (null | [number, number])[], unlocated: number}}
 *   spans[i] is the byte range [start, end) of texts[i], or null
 */
export function locate(file, texts) {
  const spans = [];
  let unlocated = 0;
  let from = 0;
  for (const t of texts) {
    const needle = Buffer.from(t, "utf8");
    const at = needle.length === 0 ? -1 : file.indexOf(needle, from);
    if (at < 0) {
      spans.push(null);
      unlocated++;
      continue;
    }
    spans.push([at, at + needle.length]);
    from = at + 1;
  }
  return { spans, unlocated };
}
