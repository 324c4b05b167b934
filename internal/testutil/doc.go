// Package testutil holds the helpers shared by the module's tests, each
// written once.
//
// Decisions:
//
//   - Tests never assert on how long something took. Work is counted
//     (allocations, steps), fake time is used for timeouts and backoff
//     (testing/synctest), and CPU time is only reported by opt-in
//     benchmarks. ThreadCPU and ProcessCPU exist for those benchmarks.
//   - WaitFor is for real servers and processes, whose progress can only be
//     observed by polling. Its timeout is an outer guard against a hang,
//     set far above the time the condition normally takes, so that a
//     loaded machine does not fail the test; it is never the assertion.
//   - Binary builds each program once per test binary, with the go
//     command that runs the tests, into a temporary folder that Main
//     removes when the tests end. A package that calls Binary runs its
//     tests with Main from its TestMain. Prebuilt binaries can be named by
//     environment variables (see Binary), so the process tests can run
//     against a release build or where no go command is available.
//   - The README's test command, go test -race ./..., passes on a busy
//     2-core machine with cold caches within go test's default timeout of
//     10 minutes a package: what takes long or needs a tool or service go
//     test cannot provide runs only when an opt-in variable (OptIns) is
//     set, and skips otherwise with one line naming it (OptIn). The
//     default run builds nothing (Binary builds only with
//     CHUNKSTREAM_TEST_PROCESSES=1) and samples the optional corpus
//     (Enabled(Full) reads all of it). Few variables, each documented in
//     README.md and docs/development.md, which a test keeps in step with
//     the code; .ci/run sets them.
package testutil
