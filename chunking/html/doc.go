// Package html is chunkstream's HTML chunker: a page's main content is
// rendered to Markdown with a map from every rendered byte back to the
// page's bytes, the Markdown chunker chunks that rendering with its own
// options and rules, and each chunk's span is mapped back to the page.
package html
