// Package deploy holds no code: it is the test module for chunkstream's
// deployment files (the Dockerfile, docker-compose.yml and the Kubernetes
// manifests and Helm values under this folder).
//
// It is a module of its own (github.com/chunkstream/chunkstream/deploy) so
// that the main module does not carry the Kubernetes API dependencies. It
// never imports the main module: the worker's defaults (stream and consumer
// names, metrics address, drain timeout, ack wait, ...) and its flags are
// read from the main module's Go source with go/parser, so changing a
// default there without changing the manifests fails these tests.
//
// Run it with
//
//	(cd deploy && go test ./...)
//
// What is checked:
//   - every Kubernetes object decodes strictly (unknown or duplicate fields
//     are errors) into its k8s.io/api type (the ServiceMonitor into the
//     Prometheus operator's type); the KEDA ScaledObject and kustomization
//     files decode strictly into small structs of their documented shape;
//   - the kustomizations render with the kustomize library, and the
//     rendered objects decode strictly too;
//   - every file a kustomization names exists, and every manifest is named
//     by a kustomization (no forgotten files);
//   - probes, ports, grace period, stream and consumer names agree with the
//     worker's defaults; containers run as non-root with a read-only root;
//   - the Helm values hold the keys docs/deployment.md (and the README,
//     while it has the table) names;
//   - docker-compose.yml parses, names the images and ports the docs
//     promise, and sets only environment variables the programs read and
//     docs/configuration.md lists;
//   - the Dockerfile builds the three commands statically and runs them as
//     a non-root user with a health check the worker implements.
package deploy
