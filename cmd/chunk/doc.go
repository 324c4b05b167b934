// Command chunk splits documents into chunks, inspects stored chunk
// collections and benchmarks the chunkers.
//
//	chunk split   [-chunker NAME] [chunker flags] [-ext LIST] [-workers N] [-o FILE] PATH...
//	chunk inspect [-max-depth N] [-max-files N] [-read N | -file PATH | -sample [-seed S]] FILE
//	chunk bench   [-chunker NAME] [chunker flags] [-parse-only] [-ext LIST] DIR
//
// Run `chunk <subcommand> -h` for every flag. Exit status: 0 on success,
// 1 when a file or the command failed, 2 on a usage error.
//
// The subcommands live in app.go (dispatch and shared flag handling),
// split.go, inspect.go and bench.go; chunker flags come from
// internal/chunkflags, generated from every chunking/registry entry.
// Decisions: a folder's chunks record "file" relative to that folder (the
// reference's chunk_folder), a file's the path as given (chunk_file);
// -workers defaults to GOMAXPROCS and never changes the output order; bench
// reads every regular file (hidden ones included) like the peer harness,
// so its files and bytes_in match the peers' lines; bench -parse-only
// counts documents as chunks so the harness table shows a throughput.
package main
