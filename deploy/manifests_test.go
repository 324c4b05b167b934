package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Kustomization is the part of kustomize's Kustomization file
// (kustomize.config.k8s.io/v1beta1) these manifests use.
type Kustomization struct {
	APIVersion         string               `json:"apiVersion"`
	Kind               string               `json:"kind"`
	Namespace          string               `json:"namespace,omitempty"`
	Labels             []KustomizeLabel     `json:"labels,omitempty"`
	Resources          []string             `json:"resources,omitempty"`
	Components         []string             `json:"components,omitempty"`
	Patches            []KustomizePatch     `json:"patches,omitempty"`
	Images             []KustomizeImage     `json:"images,omitempty"`
	ConfigMapGenerator []KustomizeGenerator `json:"configMapGenerator,omitempty"`
	SecretGenerator    []KustomizeGenerator `json:"secretGenerator,omitempty"`
}

// KustomizeLabel is an entry of `labels`.
type KustomizeLabel struct {
	Pairs            map[string]string `json:"pairs"`
	IncludeSelectors bool              `json:"includeSelectors,omitempty"`
	IncludeTemplates bool              `json:"includeTemplates,omitempty"`
}

// KustomizePatch is an entry of `patches`.
type KustomizePatch struct {
	Path   string          `json:"path,omitempty"`
	Patch  string          `json:"patch,omitempty"`
	Target *PatchTarget    `json:"target,omitempty"`
	Opts   map[string]bool `json:"options,omitempty"`
}

// PatchTarget selects the objects a patch applies to.
type PatchTarget struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Name               string `json:"name,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
}

// KustomizeImage is an entry of `images`.
type KustomizeImage struct {
	Name    string `json:"name"`
	NewName string `json:"newName,omitempty"`
	NewTag  string `json:"newTag,omitempty"`
	Digest  string `json:"digest,omitempty"`
}

// KustomizeGenerator is an entry of `configMapGenerator`/`secretGenerator`.
type KustomizeGenerator struct {
	Name     string            `json:"name"`
	Behavior string            `json:"behavior,omitempty"`
	Files    []string          `json:"files,omitempty"`
	Literals []string          `json:"literals,omitempty"`
	Envs     []string          `json:"envs,omitempty"`
	Type     string            `json:"type,omitempty"`
	Options  *GeneratorOptions `json:"options,omitempty"`
}

// GeneratorOptions are the `options` of a generator entry.
type GeneratorOptions struct {
	Labels                map[string]string `json:"labels,omitempty"`
	Annotations           map[string]string `json:"annotations,omitempty"`
	DisableNameSuffixHash bool              `json:"disableNameSuffixHash,omitempty"`
	Immutable             bool              `json:"immutable,omitempty"`
}

// ScaledObject is KEDA's ScaledObject (keda.sh/v1alpha1) as documented.
type ScaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ScaledObjectSpec `json:"spec"`
}

// ScaledObjectSpec is the spec of a ScaledObject.
type ScaledObjectSpec struct {
	ScaleTargetRef struct {
		APIVersion             string `json:"apiVersion,omitempty"`
		Kind                   string `json:"kind,omitempty"`
		Name                   string `json:"name"`
		EnvSourceContainerName string `json:"envSourceContainerName,omitempty"`
	} `json:"scaleTargetRef"`
	PollingInterval  *int32 `json:"pollingInterval,omitempty"`
	CooldownPeriod   *int32 `json:"cooldownPeriod,omitempty"`
	IdleReplicaCount *int32 `json:"idleReplicaCount,omitempty"`
	MinReplicaCount  *int32 `json:"minReplicaCount,omitempty"`
	MaxReplicaCount  *int32 `json:"maxReplicaCount,omitempty"`
	Fallback         *struct {
		FailureThreshold int32  `json:"failureThreshold"`
		Replicas         int32  `json:"replicas"`
		Behavior         string `json:"behavior,omitempty"`
	} `json:"fallback,omitempty"`
	Advanced *struct {
		RestoreToOriginalReplicaCount bool `json:"restoreToOriginalReplicaCount,omitempty"`
		HorizontalPodAutoscalerConfig *struct {
			Name     string          `json:"name,omitempty"`
			Behavior json.RawMessage `json:"behavior,omitempty"`
		} `json:"horizontalPodAutoscalerConfig,omitempty"`
	} `json:"advanced,omitempty"`
	Triggers []ScaleTrigger `json:"triggers,omitempty"`
}

// ScaleTrigger is one KEDA trigger.
type ScaleTrigger struct {
	Type              string            `json:"type"`
	Name              string            `json:"name,omitempty"`
	UseCachedMetrics  bool              `json:"useCachedMetrics,omitempty"`
	MetricType        string            `json:"metricType,omitempty"`
	Metadata          map[string]string `json:"metadata"`
	AuthenticationRef *struct {
		Name string `json:"name"`
		Kind string `json:"kind,omitempty"`
	} `json:"authenticationRef,omitempty"`
}

// object is one decoded manifest document.
type object struct {
	File string // relative to deploy/
	Kind string
	Name string
	Obj  any // pointer to the typed object
}

// newTyped returns an empty typed object for apiVersion/kind.
func newTyped(apiVersion, kind string) (any, error) {
	switch apiVersion + "/" + kind {
	case "v1/Namespace":
		return &corev1.Namespace{}, nil
	case "v1/ServiceAccount":
		return &corev1.ServiceAccount{}, nil
	case "v1/ConfigMap":
		return &corev1.ConfigMap{}, nil
	case "v1/Secret":
		return &corev1.Secret{}, nil
	case "v1/Service":
		return &corev1.Service{}, nil
	case "v1/PersistentVolumeClaim":
		return &corev1.PersistentVolumeClaim{}, nil
	case "apps/v1/Deployment":
		return &appsv1.Deployment{}, nil
	case "batch/v1/Job":
		return &batchv1.Job{}, nil
	case "policy/v1/PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, nil
	case "keda.sh/v1alpha1/ScaledObject":
		return &ScaledObject{}, nil
	case "monitoring.coreos.com/v1/ServiceMonitor":
		return &monitoringv1.ServiceMonitor{}, nil
	case "monitoring.coreos.com/v1/PrometheusRule":
		return &monitoringv1.PrometheusRule{}, nil
	}
	return nil, fmt.Errorf("unexpected apiVersion/kind %s/%s", apiVersion, kind)
}

var docSep = regexp.MustCompile(`(?m)^---[ \t]*$`)

// splitDocs splits a multi-document YAML file, dropping empty documents.
func splitDocs(data []byte) [][]byte {
	var out [][]byte
	for _, d := range docSep.Split(string(data), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			out = append(out, []byte(d))
		}
	}
	return out
}

func stripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// decodeStrict decodes one YAML document into v; unknown and duplicate
// fields are errors.
func decodeStrict(doc []byte, v any) error {
	return yaml.UnmarshalStrict(doc, v)
}

// kustomizeDirs are the folders holding a kustomization.yaml.
var kustomizeDirs = []string{"base", "overlays/production", "backfill", "monitoring"}

// manifestFiles lists the Kubernetes YAML files under the kustomize
// folders, relative to deploy/. monitoring/rules holds Prometheus rule
// files, not Kubernetes objects.
func manifestFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, top := range []string{"base", "overlays", "backfill", "monitoring"} {
		err := filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && filepath.ToSlash(p) == rulesDir {
				return filepath.SkipDir
			}
			if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) && filepath.Base(p) != "kustomization.yaml" {
				files = append(files, filepath.ToSlash(p))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no manifests found")
	}
	return files
}

// loadObjects decodes every document of every manifest file strictly.
func loadObjects(t *testing.T) []object {
	t.Helper()
	var objs []object
	for _, f := range manifestFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range splitDocs(data) {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				t.Errorf("%s: document %d: %v", f, i, err)
				continue
			}
			v, err := newTyped(tm.APIVersion, tm.Kind)
			if err != nil {
				t.Errorf("%s: document %d: %v", f, i, err)
				continue
			}
			if err := decodeStrict(doc, v); err != nil {
				t.Errorf("%s: document %d (%s): strict decode: %v", f, i, tm.Kind, err)
				continue
			}
			name := ""
			if m, ok := v.(metav1.Object); ok {
				name = m.GetName()
			}
			if name == "" {
				t.Errorf("%s: document %d (%s) has no metadata.name", f, i, tm.Kind)
			}
			objs = append(objs, object{File: f, Kind: tm.Kind, Name: name, Obj: v})
		}
	}
	return objs
}

func loadKustomization(t *testing.T, dir string) Kustomization {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k Kustomization
	if err := decodeStrict(data, &k); err != nil {
		t.Fatalf("%s/kustomization.yaml: strict decode: %v", dir, err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Errorf("%s/kustomization.yaml: apiVersion/kind = %s/%s, want kustomize.config.k8s.io/v1beta1/Kustomization", dir, k.APIVersion, k.Kind)
	}
	return k
}

// find returns the objects of one kind and name from one folder.
func find[T any](t *testing.T, objs []object, dir, kind, name string) T {
	t.Helper()
	for _, o := range objs {
		if o.Kind == kind && o.Name == name && strings.HasPrefix(o.File, dir+"/") {
			if v, ok := o.Obj.(T); ok {
				return v
			}
		}
	}
	var zero T
	t.Fatalf("%s: no %s %q", dir, kind, name)
	return zero
}

func TestManifestsDecodeStrictly(t *testing.T) {
	objs := loadObjects(t)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.Kind]++
	}
	for _, k := range []string{"Deployment", "ConfigMap", "Service", "PodDisruptionBudget", "ScaledObject", "Job", "ServiceMonitor", "PrometheusRule", "Secret"} {
		if kinds[k] == 0 {
			t.Errorf("no %s among the manifests", k)
		}
	}
}

// TestStrictDecodeRejectsUnknownFields proves the decoder used above fails
// on a misspelt field, so the test above can fail.
func TestStrictDecodeRejectsUnknownFields(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		v    any
	}{
		{"deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replica: 2\n", &appsv1.Deployment{}},
		{"probe", "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: c\n    livenessProbe: {httpGet: {path: /healthz, prot: 9090}}\n", &corev1.Pod{}},
		{"scaledobject", "spec:\n  scaleTargetRef: {name: x}\n  maxReplicas: 3\n", &ScaledObject{}},
		{"kustomization", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresource: [a.yaml]\n", &Kustomization{}},
		{"duplicate", "kind: ConfigMap\nkind: ConfigMap\n", &corev1.ConfigMap{}},
	} {
		if err := decodeStrict([]byte(tc.doc), tc.v); err == nil {
			t.Errorf("%s: decodeStrict(%q) = nil, want an error", tc.name, tc.doc)
		}
	}
}

// TestKustomizationsReferenceExistingFiles checks every path a
// kustomization names, and that every manifest is named by one (apart from
// the documented example Secrets).
func TestKustomizationsReferenceExistingFiles(t *testing.T) {
	referenced := map[string]bool{}
	for _, dir := range kustomizeDirs {
		k := loadKustomization(t, dir)
		check := func(what, rel string, allowDir bool) {
			p := filepath.ToSlash(filepath.Join(dir, rel))
			st, err := os.Stat(p)
			switch {
			case err != nil:
				t.Errorf("%s/kustomization.yaml: %s %q: %v", dir, what, rel, err)
			case st.IsDir() && !allowDir:
				t.Errorf("%s/kustomization.yaml: %s %q is a folder", dir, what, rel)
			case st.IsDir():
				if _, err := os.Stat(filepath.Join(p, "kustomization.yaml")); err != nil {
					t.Errorf("%s/kustomization.yaml: %s %q has no kustomization.yaml", dir, what, rel)
				}
			default:
				referenced[p] = true
			}
		}
		if len(k.Resources) == 0 {
			t.Errorf("%s/kustomization.yaml: no resources", dir)
		}
		for _, r := range k.Resources {
			check("resource", r, true)
		}
		for _, p := range k.Patches {
			if p.Path == "" && p.Patch == "" {
				t.Errorf("%s/kustomization.yaml: patch with neither path nor patch", dir)
			}
			if p.Path != "" {
				check("patch", p.Path, false)
			}
		}
		for _, g := range k.ConfigMapGenerator {
			for _, f := range g.Files {
				check("configMapGenerator file", f, false)
			}
		}
		for _, img := range k.Images {
			if img.Name != "chunkstream/chunkstream" {
				t.Errorf("%s/kustomization.yaml: image %q, want chunkstream/chunkstream", dir, img.Name)
			}
		}
	}
	for _, f := range manifestFiles(t) {
		if !referenced[f] && filepath.Base(f) != "secrets.example.yaml" {
			t.Errorf("%s is not named by any kustomization", f)
		}
	}
}

// podSpecs returns every pod template of Deployments and Jobs in dir.
func podSpecs(objs []object, dir string) map[string]*corev1.PodTemplateSpec {
	out := map[string]*corev1.PodTemplateSpec{}
	for _, o := range objs {
		if !strings.HasPrefix(o.File, dir+"/") {
			continue
		}
		switch v := o.Obj.(type) {
		case *appsv1.Deployment:
			out[o.File+": Deployment "+o.Name] = &v.Spec.Template
		case *batchv1.Job:
			out[o.File+": Job "+o.Name] = &v.Spec.Template
		}
	}
	return out
}

func TestContainersAreLockedDown(t *testing.T) {
	objs := loadObjects(t)
	for _, dir := range []string{"base", "backfill"} {
		for where, tpl := range podSpecs(objs, dir) {
			ps := tpl.Spec.SecurityContext
			if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.RunAsUser == nil || *ps.RunAsUser == 0 {
				t.Errorf("%s: pod securityContext must set runAsNonRoot: true and a non-zero runAsUser", where)
			}
			if tpl.Spec.AutomountServiceAccountToken == nil || *tpl.Spec.AutomountServiceAccountToken {
				t.Errorf("%s: automountServiceAccountToken should be false", where)
			}
			for _, c := range tpl.Spec.Containers {
				sc := c.SecurityContext
				switch {
				case sc == nil:
					t.Errorf("%s: container %s has no securityContext", where, c.Name)
				case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
					t.Errorf("%s: container %s: readOnlyRootFilesystem must be true", where, c.Name)
				case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
					t.Errorf("%s: container %s: allowPrivilegeEscalation must be false", where, c.Name)
				case sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL"):
					t.Errorf("%s: container %s: capabilities must drop ALL", where, c.Name)
				}
				if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
					t.Errorf("%s: container %s needs cpu and memory requests and a memory limit", where, c.Name)
				}
				mounts := map[string]bool{}
				for _, m := range c.VolumeMounts {
					mounts[m.MountPath] = true
				}
				if !mounts["/tmp"] {
					t.Errorf("%s: container %s: read-only root needs a writable /tmp volume", where, c.Name)
				}
			}
		}
	}
}

func workerContainer(t *testing.T, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "worker" {
			return c
		}
	}
	t.Fatalf("Deployment %s has no container named worker", d.Name)
	return corev1.Container{}
}

// TestWorkerDeploymentAgreesWithWorkerDefaults ties the Deployment to the
// worker's source: probe paths and port, grace period versus drain time,
// the command and its configuration sources.
func TestWorkerDeploymentAgreesWithWorkerDefaults(t *testing.T) {
	objs := loadObjects(t)
	d := find[*appsv1.Deployment](t, objs, "base", "Deployment", "chunkstream-worker")
	c := workerContainer(t, d)
	port := metricsPort(t)

	if d.Spec.Replicas != nil {
		t.Errorf("Deployment sets replicas = %d; KEDA owns the count, leave it unset", *d.Spec.Replicas)
	}
	if !slices.Equal(c.Command, []string{"worker"}) {
		t.Errorf("worker command = %q, want [worker]", c.Command)
	}
	var metricsContainerPort int32
	for _, p := range c.Ports {
		if p.Name == "metrics" {
			metricsContainerPort = p.ContainerPort
		}
	}
	if int(metricsContainerPort) != port {
		t.Errorf("containerPort named metrics = %d, want the worker's default metrics port %d", metricsContainerPort, port)
	}
	probePort := func(name string, p *corev1.Probe, wantPath string) {
		t.Helper()
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe: missing or not httpGet", name)
			return
		}
		if p.HTTPGet.Path != wantPath {
			t.Errorf("%s probe path = %q, want %q", name, p.HTTPGet.Path, wantPath)
		}
		pp := p.HTTPGet.Port
		if !(pp.StrVal == "metrics" || int(pp.IntVal) == port) {
			t.Errorf("%s probe port = %s, want metrics (%d)", name, pp.String(), port)
		}
	}
	probePort("liveness", c.LivenessProbe, "/healthz")
	probePort("readiness", c.ReadinessProbe, "/readyz")
	if c.StartupProbe != nil {
		probePort("startup", c.StartupProbe, "/healthz")
	}

	drain := workerDuration(t, "CHUNKSTREAM_DRAIN_TIMEOUT")
	grace := d.Spec.Template.Spec.TerminationGracePeriodSeconds
	if grace == nil || float64(*grace) <= drain.Seconds() {
		t.Errorf("terminationGracePeriodSeconds = %v, must exceed the worker's drain timeout %v", grace, drain)
	} else if float64(*grace) < drain.Seconds()+10 {
		t.Errorf("terminationGracePeriodSeconds = %d leaves under 10s beyond the drain timeout %v", *grace, drain)
	}

	var fromCM, fromSecret bool
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef != nil && ef.ConfigMapRef.Name == "chunkstream-config" {
			fromCM = true
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			fromSecret = true
		}
		if strings.Contains(e.Name, "PASSWORD") || strings.Contains(e.Name, "TOKEN") || strings.Contains(e.Name, "API_KEY") {
			if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				t.Errorf("env %s must come from a Secret", e.Name)
			}
		}
	}
	if !fromCM || !fromSecret {
		t.Errorf("worker config: envFrom ConfigMap chunkstream-config = %v, env from a Secret = %v; want both", fromCM, fromSecret)
	}
}

// knownEnv is every variable the programs read: the env tags of the main
// module's source.
func knownEnv(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for name := range mainSource(t).Env {
		out[name] = true
	}
	if len(out) == 0 {
		t.Fatal("no env tags found in the main module's source")
	}
	return out
}

func TestConfigMapAgreesWithWorkerDefaults(t *testing.T) {
	objs := loadObjects(t)
	known := knownEnv(t)
	table := configEnvTable(t)
	for _, o := range objs {
		cm, ok := o.Obj.(*corev1.ConfigMap)
		if !ok {
			continue
		}
		for k := range cm.Data {
			if !known[k] {
				t.Errorf("%s: ConfigMap key %s is no variable the worker reads", o.File, k)
			}
			if !table[k] {
				t.Errorf("%s: ConfigMap key %s is not in the configuration tables", o.File, k)
			}
		}
	}
	cm := find[*corev1.ConfigMap](t, objs, "base", "ConfigMap", "chunkstream-config")
	// The names the scaler and the bootstrap Job rely on must be the
	// worker's defaults (or the config must say otherwise everywhere).
	for _, name := range []string{"CHUNKSTREAM_INGEST_STREAM", "CHUNKSTREAM_CHUNKS_STREAM", "CHUNKSTREAM_DLQ_STREAM", "CHUNKSTREAM_CONSUMER", "CHUNKSTREAM_METRICS_ADDR"} {
		if v, ok := cm.Data[name]; ok && v != workerDefault(t, name) {
			t.Errorf("ConfigMap %s = %q, worker default %q: the scaler, probes and bootstrap assume the default", name, v, workerDefault(t, name))
		}
	}
	if v, ok := cm.Data["CHUNKSTREAM_DRAIN_TIMEOUT"]; ok {
		if want := workerDefault(t, "CHUNKSTREAM_DRAIN_TIMEOUT"); v != want {
			t.Errorf("ConfigMap CHUNKSTREAM_DRAIN_TIMEOUT = %q, worker default %q: the grace period is checked against the default", v, want)
		}
	}
	prod := find[*corev1.ConfigMap](t, objs, "overlays/production", "ConfigMap", "chunkstream-config")
	if prod.Data["CHUNKSTREAM_REPLICAS"] != "3" {
		t.Errorf("production CHUNKSTREAM_REPLICAS = %q, want 3 (R3 on the three-node cluster)", prod.Data["CHUNKSTREAM_REPLICAS"])
	}
	if def := workerDefault(t, "CHUNKSTREAM_REPLICAS"); def != "1" {
		t.Errorf("worker default CHUNKSTREAM_REPLICAS = %q, want 1", def)
	}
}

func TestScaledObjectWatchesTheWorkerConsumer(t *testing.T) {
	objs := loadObjects(t)
	so := find[*ScaledObject](t, objs, "base", "ScaledObject", "chunkstream-worker")
	d := find[*appsv1.Deployment](t, objs, "base", "Deployment", "chunkstream-worker")
	if so.Spec.ScaleTargetRef.Name != d.Name || so.Spec.ScaleTargetRef.Kind != "Deployment" {
		t.Errorf("scaleTargetRef = %+v, want Deployment %s", so.Spec.ScaleTargetRef, d.Name)
	}
	if so.Spec.MinReplicaCount == nil || so.Spec.MaxReplicaCount == nil || *so.Spec.MinReplicaCount > *so.Spec.MaxReplicaCount || *so.Spec.MaxReplicaCount < 2 {
		t.Errorf("min/max replicas = %v/%v, want both set, min <= max, max >= 2", so.Spec.MinReplicaCount, so.Spec.MaxReplicaCount)
	}
	if len(so.Spec.Triggers) != 1 || so.Spec.Triggers[0].Type != "nats-jetstream" {
		t.Fatalf("triggers = %+v, want one nats-jetstream trigger", so.Spec.Triggers)
	}
	md := so.Spec.Triggers[0].Metadata
	allowed := []string{"natsServerMonitoringEndpoint", "account", "stream", "consumer", "lagThreshold", "activationLagThreshold", "useHttps"}
	for k := range md {
		if !slices.Contains(allowed, k) {
			t.Errorf("nats-jetstream metadata %q is not a documented parameter", k)
		}
	}
	if md["stream"] != workerDefault(t, "CHUNKSTREAM_INGEST_STREAM") {
		t.Errorf("scaler stream = %q, worker's ingest stream %q", md["stream"], workerDefault(t, "CHUNKSTREAM_INGEST_STREAM"))
	}
	if md["consumer"] != workerDefault(t, "CHUNKSTREAM_CONSUMER") {
		t.Errorf("scaler consumer = %q, worker's consumer %q", md["consumer"], workerDefault(t, "CHUNKSTREAM_CONSUMER"))
	}
	if n, err := strconv.Atoi(md["lagThreshold"]); err != nil || n <= 0 {
		t.Errorf("lagThreshold = %q, want a positive integer", md["lagThreshold"])
	}
	if md["account"] == "" {
		t.Errorf("account is empty, want $G (the global account) or yours")
	}
	ep := md["natsServerMonitoringEndpoint"]
	if !strings.HasSuffix(ep, ":"+strconv.Itoa(natsMonitorPort(t))) {
		t.Errorf("natsServerMonitoringEndpoint = %q, want the NATS chart's monitor port %d", ep, natsMonitorPort(t))
	}
	if !strings.HasPrefix(ep, "nats-headless.") {
		t.Errorf("natsServerMonitoringEndpoint = %q: in a cluster the scaler needs the headless service (it reads <pod>.<endpoint>)", ep)
	}

	prod := find[*ScaledObject](t, objs, "overlays/production", "ScaledObject", "chunkstream-worker")
	if prod.Spec.MaxReplicaCount == nil || *prod.Spec.MaxReplicaCount <= *so.Spec.MaxReplicaCount {
		t.Errorf("production maxReplicaCount should exceed the base's")
	}
}

func TestSelectorsMatchWorkerPods(t *testing.T) {
	objs := loadObjects(t)
	d := find[*appsv1.Deployment](t, objs, "base", "Deployment", "chunkstream-worker")
	podLabels := d.Spec.Template.Labels
	matches := func(sel map[string]string) bool {
		if len(sel) == 0 {
			return false
		}
		for k, v := range sel {
			if podLabels[k] != v {
				return false
			}
		}
		return true
	}
	if !matches(d.Spec.Selector.MatchLabels) {
		t.Errorf("Deployment selector %v does not match its pod labels %v", d.Spec.Selector.MatchLabels, podLabels)
	}
	pdb := find[*policyv1.PodDisruptionBudget](t, objs, "base", "PodDisruptionBudget", "chunkstream-worker")
	if pdb.Spec.Selector == nil || !matches(pdb.Spec.Selector.MatchLabels) {
		t.Errorf("PodDisruptionBudget selector does not match the worker pods")
	}
	if pdb.Spec.MinAvailable == nil && pdb.Spec.MaxUnavailable == nil {
		t.Errorf("PodDisruptionBudget sets neither minAvailable nor maxUnavailable")
	}
	svc := find[*corev1.Service](t, objs, "base", "Service", "chunkstream-worker-metrics")
	if !matches(svc.Spec.Selector) {
		t.Errorf("Service selector %v does not match the worker pods", svc.Spec.Selector)
	}
	var svcPort *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Name == "metrics" {
			svcPort = &svc.Spec.Ports[i]
		}
	}
	if svcPort == nil || int(svcPort.Port) != metricsPort(t) || svcPort.TargetPort.StrVal != "metrics" {
		t.Errorf("Service port metrics = %+v, want port %d targeting the container port named metrics", svcPort, metricsPort(t))
	}
	sm := find[*monitoringv1.ServiceMonitor](t, objs, "overlays/production", "ServiceMonitor", "chunkstream-worker")
	for k, v := range sm.Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("ServiceMonitor selector %s=%s does not match the Service labels %v", k, v, svc.Labels)
		}
	}
	if len(sm.Spec.Endpoints) == 0 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("ServiceMonitor endpoints = %+v, want port metrics path /metrics", sm.Spec.Endpoints)
	}
	ann := d.Spec.Template.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != strconv.Itoa(metricsPort(t)) || ann["prometheus.io/path"] != "/metrics" {
		t.Errorf("pod scrape annotations = %v, want scrape true, port %d, path /metrics", ann, metricsPort(t))
	}
}

// TestProductionPatchesMountWhatTheyConfigure checks that every file path
// the production ConfigMap names is mounted into the containers that read
// it.
func TestProductionPatchesMountWhatTheyConfigure(t *testing.T) {
	objs := loadObjects(t)
	cm := find[*corev1.ConfigMap](t, objs, "overlays/production", "ConfigMap", "chunkstream-config")
	for where, tpl := range podSpecs(objs, "overlays/production") {
		for _, c := range tpl.Spec.Containers {
			for k, v := range cm.Data {
				if !strings.HasPrefix(v, "/") {
					continue
				}
				if strings.Contains(k, "QDRANT") && c.Name != "worker" {
					continue
				}
				ok := false
				for _, m := range c.VolumeMounts {
					if strings.HasPrefix(v, strings.TrimSuffix(m.MountPath, "/")+"/") {
						ok = true
					}
				}
				if !ok {
					t.Errorf("%s: container %s reads %s=%s but mounts nothing there", where, c.Name, k, v)
				}
			}
			for _, m := range c.VolumeMounts {
				if !slices.ContainsFunc(tpl.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name }) {
					t.Errorf("%s: container %s mounts volume %s that the patch does not declare", where, c.Name, m.Name)
				}
			}
		}
	}
	if !strings.HasPrefix(cm.Data["NATS_URL"], "tls://") {
		t.Errorf("production NATS_URL = %q, want tls://", cm.Data["NATS_URL"])
	}
}

// TestBackfillJobRunsTheProducer checks the producer's command line
// against the flags cmd/producer defines.
func TestBackfillJobRunsTheProducer(t *testing.T) {
	objs := loadObjects(t)
	j := find[*batchv1.Job](t, objs, "backfill", "Job", "chunkstream-backfill")
	cs := j.Spec.Template.Spec.Containers
	if len(cs) != 1 || len(cs[0].Command) == 0 || cs[0].Command[0] != "producer" {
		t.Fatalf("backfill containers = %+v, want one running producer", cs)
	}
	if cs[0].Image != "chunkstream/chunkstream" {
		t.Errorf("backfill image = %q, want chunkstream/chunkstream (tag set by kustomize)", cs[0].Image)
	}
	checkFlags(t, "cmd/producer", append(cs[0].Command[1:], cs[0].Args...))
	if r := j.Spec.Template.Spec.RestartPolicy; r != corev1.RestartPolicyOnFailure && r != corev1.RestartPolicyNever {
		t.Errorf("backfill restartPolicy = %q", r)
	}
	// The producer reads the same ConfigMap: in production it names the
	// NATS TLS files, which must be mounted.
	prod := find[*corev1.ConfigMap](t, objs, "overlays/production", "ConfigMap", "chunkstream-config")
	for k, v := range prod.Data {
		if !strings.HasPrefix(k, "CHUNKSTREAM_NATS_") || !strings.HasPrefix(v, "/") {
			continue
		}
		if !slices.ContainsFunc(cs[0].VolumeMounts, func(m corev1.VolumeMount) bool { return strings.HasPrefix(v, m.MountPath+"/") }) {
			t.Errorf("backfill producer: production %s=%s is not mounted", k, v)
		}
	}
}

// checkFlags fails for every -flag in args that the command does not define.
func checkFlags(t *testing.T, cmd string, args []string) {
	t.Helper()
	flags := mainSource(t).Flags[cmd]
	if len(flags) == 0 {
		t.Errorf("%s defines no flags (or does not exist)", cmd)
		return
	}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			continue
		}
		name := strings.TrimLeft(a, "-")
		name, _, _ = strings.Cut(name, "=")
		if !flags[name] {
			t.Errorf("%s has no flag -%s (it defines %v)", cmd, name, keys(flags))
		}
	}
}

func keys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestPodEnvironmentIsKnown checks that every chunkstream variable a pod
// template sets (besides the ConfigMap) is one the programs read.
func TestPodEnvironmentIsKnown(t *testing.T) {
	objs := loadObjects(t)
	known := knownEnv(t)
	for _, dir := range []string{"base", "overlays/production", "backfill"} {
		for where, tpl := range podSpecs(objs, dir) {
			for _, c := range tpl.Spec.Containers {
				for _, e := range c.Env {
					if (strings.HasPrefix(e.Name, "CHUNKSTREAM_") || strings.HasPrefix(e.Name, "NATS_")) && !known[e.Name] {
						t.Errorf("%s: container %s sets %s, which no program reads", where, c.Name, e.Name)
					}
				}
			}
		}
	}
}

// TestConcurrencyFitsMemory: every ConfigMap sets CHUNKSTREAM_CONCURRENCY
// (the default follows the node's cores when the pod has no CPU limit),
// and concurrency × the largest document stays within the worker's
// memory limit.
func TestConcurrencyFitsMemory(t *testing.T) {
	maxDoc, err := strconv.ParseInt(workerDefault(t, "CHUNKSTREAM_MAX_DOC_BYTES"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"base", "overlays/production"} {
		objs := build(t, dir)
		cm := find[*corev1.ConfigMap](t, objs, dir, "ConfigMap", "chunkstream-config")
		n, err := strconv.Atoi(cm.Data["CHUNKSTREAM_CONCURRENCY"])
		if err != nil || n < 1 {
			t.Errorf("%s: CHUNKSTREAM_CONCURRENCY = %q, want a positive number", dir, cm.Data["CHUNKSTREAM_CONCURRENCY"])
			continue
		}
		c := workerContainer(t, find[*appsv1.Deployment](t, objs, dir, "Deployment", "chunkstream-worker"))
		if lim := c.Resources.Limits.Memory().Value(); int64(n)*maxDoc > lim {
			t.Errorf("%s: %d documents of up to %d bytes in flight exceed the %d-byte memory limit", dir, n, maxDoc, lim)
		}
	}
}
