// Package deploy holds no code: it is the test module for chunkstream's
// deployment files (the Dockerfile, docker-compose.yml and the Kubernetes
// manifests, Helm values, alerting rules and Grafana dashboard under this
// folder).
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
//   - the Helm values hold the keys docs/deployment.md names;
//   - docker-compose.yml parses, names the images and ports the docs
//     promise, and sets only environment variables the programs read and
//     docs/configuration.md lists;
//   - the Dockerfile builds the three commands statically and runs them as
//     a non-root user with a health check the worker implements;
//   - the alerting rules (monitoring/rules) pass `promtool check rules` and
//     their unit tests (`promtool test rules`), which hold a firing and a
//     quiet case of every alert; every alert has a severity, a summary, a
//     description and a runbook section in docs/operations.md, whose
//     table agrees with the rules;
//   - the Grafana dashboard (monitoring/dashboards) is valid JSON whose
//     panels each have a query on the data source variable, filtered by
//     the job variable, laid out without overlap; promtool parses every
//     query; every metric the rules and the dashboard name is declared in
//     the worker's source;
//   - monitoring/prometheusrule.yaml is generated from the rule file
//     (-update rewrites it), the production overlay renders it and the
//     dashboard ConfigMap with the label the Grafana sidecar of
//     helm/kube-prometheus-stack-values.yaml reads, and those values
//     select PrometheusRules and ServiceMonitors of every namespace;
//   - Compose's Prometheus mounts the rule file where its rule_files look,
//     `promtool check config` accepts its configuration, and no two
//     services publish the same host port.
//   - tracing is wired off by default: compose's worker and producer
//     (OTEL_* variables settable where compose runs, the endpoint the
//     jaeger service of the tracing profile), the ConfigMap read by the
//     worker Deployment and the backfill Job, each naming its service, a
//     sampler docs/configuration.md lists; docs/operations.md says how to
//     turn it on in each. The OTEL_* variables count as read when
//     cmd/internal/otelenv names them.
//
// The promtool checks skip, with one line, when promtool is not on PATH
// (Debian: apt-get install prometheus). A test of cmd/worker in the main
// module runs a real Prometheus against a worker: every dashboard query
// returns data and every rule evaluates.
//
// Decisions: the rule file in Prometheus' own format is the source, since
// promtool, Compose and any Prometheus read it; the PrometheusRule is
// generated from it rather than written twice. chunkstream has no Helm
// chart: the kustomize overlay ships the PrometheusRule and the dashboard
// ConfigMap, and the kube-prometheus-stack values make that chart load
// them.
package deploy
