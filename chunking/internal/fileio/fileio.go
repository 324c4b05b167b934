// Package fileio holds the file and folder helpers the chunkers share:
// ChunkFile and ChunkFolder of package markdown and package twostep are
// File and Folder around the chunker's own ChunkFunc.
package fileio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/chunkstream/chunkstream/chunking"
)

// MarkdownExtensions, MDXExtensions and TextExtensions return the file
// extensions of the text formats the Markdown and two-step chunkers read
// (markdown, mdx and text): their ChunkFolder walks these, and the
// registry's formats are these, so a folder run and a request agree.
func MarkdownExtensions() []string { return []string{".md", ".markdown"} }

// MDXExtensions: see MarkdownExtensions.
func MDXExtensions() []string { return []string{".mdx"} }

// TextExtensions: see MarkdownExtensions.
func TextExtensions() []string { return []string{".txt", ".text"} }

// TextFormatExtensions returns MarkdownExtensions, MDXExtensions and
// TextExtensions, in that order.
func TextFormatExtensions() []string {
	return slices.Concat(MarkdownExtensions(), MDXExtensions(), TextExtensions())
}

// ChunkFunc chunks one document, stopping when ctx ends.
type ChunkFunc func(ctx context.Context, doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error)

// Collect turns a streaming chunk function into a ChunkFunc.
func Collect(f func(ctx context.Context, doc chunking.Document, yield func(chunking.Chunk) bool) ([]chunking.Warning, error)) ChunkFunc {
	return func(ctx context.Context, doc chunking.Document) ([]chunking.Chunk, []chunking.Warning, error) {
		var chunks []chunking.Chunk
		warns, err := f(ctx, doc, func(ch chunking.Chunk) bool {
			chunks = append(chunks, ch)
			return true
		})
		if err != nil {
			return nil, nil, err
		}
		return chunks, warns, nil
	}
}

// File reads and chunks the file at p as one document whose Path (chunk
// metadata "file") is p cleaned, with "/" separators; the format follows
// the extension. Errors are prefixed with pkg.
func File(ctx context.Context, pkg, p string, chunk ChunkFunc) ([]chunking.Chunk, []chunking.Warning, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %s: %w", pkg, p, err)
	}
	if err := chunking.CheckName(p); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", pkg, err)
	}
	content, err := os.ReadFile(p)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", pkg, err)
	}
	return chunk(ctx, chunking.Document{Path: path.Clean(filepath.ToSlash(p)), Content: content})
}

// Folder chunks every file chunking.WalkFolder lists, each a document
// whose Path is relative to dir. A file that cannot be read or chunked
// becomes a warning; only a failed walk of dir or the end of ctx is an
// error (returned with the chunks so far).
func Folder(ctx context.Context, pkg, dir string, exts []string, chunk ChunkFunc) ([]chunking.Chunk, []chunking.Warning, error) {
	files, warns, err := chunking.WalkFolder(ctx, dir, exts)
	if err != nil {
		return nil, warns, fmt.Errorf("%s: %w", pkg, err)
	}
	var out []chunking.Chunk
	for _, rel := range files {
		if err := ctx.Err(); err != nil {
			return out, warns, fmt.Errorf("%s: %s: %w", pkg, dir, err)
		}
		if err := chunking.CheckName(rel); err != nil {
			warns = append(warns, chunking.Warning{Kind: chunking.WarnUnreadable, File: strings.ToValidUTF8(rel, "\uFFFD"), Text: err.Error()})
			continue
		}
		content, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			warns = append(warns, chunking.Warning{Kind: chunking.WarnUnreadable, File: rel, Text: "cannot read: " + err.Error()})
			continue
		}
		chunks, ws, err := chunk(ctx, chunking.Document{Path: rel, Content: content})
		warns = append(warns, ws...)
		if err != nil {
			if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
				return out, warns, err
			}
			warns = append(warns, chunking.Warning{Kind: chunking.WarnUnreadable, File: rel, Text: err.Error()})
			continue
		}
		out = append(out, chunks...)
	}
	return out, warns, nil
}
