// Package deploy holds no code: it is the test module for chunkstream's
// deployment files (the Dockerfile, docker-compose.yml and the Kubernetes
// manifests, Helm values, alerting rules and Grafana dashboard under this
// folder).
//
// It is a module of its own (github.com/chunkstream/chunkstream/deploy) so
// that the main module does not carry the Kubernetes API dependencies. It
// never imports the main module: the worker's defaults and flags are read
// from the main module's Go source with go/parser, so changing a default
// there without changing the manifests fails these tests. Run it with
//
//	(cd deploy && go test ./...)
//
// docs/development.md ("The deployment tests") lists what is checked and
// why the rule file, not the PrometheusRule, is the source.
package deploy
