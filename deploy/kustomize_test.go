package deploy

import (
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// build runs `kustomize build dir` with the kustomize library and decodes
// every rendered object strictly.
func build(t *testing.T, dir string) []object {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	var objs []object
	for i, doc := range splitDocs(out) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatal(err)
		}
		v, err := newTyped(tm.APIVersion, tm.Kind)
		if err != nil {
			t.Errorf("kustomize build %s: document %d: %v", dir, i, err)
			continue
		}
		if err := decodeStrict(doc, v); err != nil {
			t.Errorf("kustomize build %s: %s: strict decode: %v", dir, tm.Kind, err)
			continue
		}
		m := v.(metav1.Object)
		objs = append(objs, object{File: dir + "/(built)", Kind: tm.Kind, Name: m.GetName(), Obj: v})
	}
	return objs
}

// TestKustomizeBuilds renders base, production and backfill as kubectl
// would, checks namespaces, images and generated names, and that the
// production patches merged into the base objects.
func TestKustomizeBuilds(t *testing.T) {
	for _, dir := range kustomizeDirs {
		objs := build(t, dir)
		if len(objs) == 0 {
			t.Fatalf("kustomize build %s: no objects", dir)
		}
		cms := map[string]bool{}
		for _, o := range objs {
			if o.Kind == "ConfigMap" {
				cms[o.Name] = true
			}
			if m := o.Obj.(metav1.Object); o.Kind != "Namespace" && m.GetNamespace() != "chunkstream" {
				t.Errorf("%s: %s %s in namespace %q, want chunkstream", dir, o.Kind, o.Name, m.GetNamespace())
			}
		}
		for where, tpl := range podSpecs(objs, dir) {
			for _, c := range tpl.Spec.Containers {
				if strings.HasPrefix(c.Image, "chunkstream/chunkstream") && c.Image != "chunkstream/chunkstream:0.1.0" {
					t.Errorf("%s: %s image %q, want the kustomization's tag", dir, where, c.Image)
				}
			}
			for _, v := range tpl.Spec.Volumes {
				if v.ConfigMap != nil && !cms[v.ConfigMap.Name] {
					t.Errorf("%s: %s mounts ConfigMap %q, which the build does not contain", dir, where, v.ConfigMap.Name)
				}
			}
		}
	}

	prod := build(t, "overlays/production")
	dir := "overlays/production"
	d := find[*appsv1.Deployment](t, prod, dir, "Deployment", "chunkstream-worker")
	c := workerContainer(t, d)
	if c.LivenessProbe == nil || c.ReadinessProbe == nil || len(c.Env) == 0 {
		t.Errorf("production worker lost the base's probes or env in the merge")
	}
	var mounts []string
	for _, m := range c.VolumeMounts {
		mounts = append(mounts, m.MountPath)
	}
	for _, want := range []string{"/tmp", "/etc/chunkstream/nats-tls", "/etc/chunkstream/qdrant-tls"} {
		if !slices.Contains(mounts, want) {
			t.Errorf("production worker mounts %q, want %s", mounts, want)
		}
	}
	if c.Resources.Requests.Cpu().String() != "1" {
		t.Errorf("production worker cpu request = %s", c.Resources.Requests.Cpu())
	}
	cm := find[*corev1.ConfigMap](t, prod, dir, "ConfigMap", "chunkstream-config")
	if cm.Data["CHUNKSTREAM_REPLICAS"] != "3" || cm.Data["CHUNKSTREAM_CONSUMER"] == "" {
		t.Errorf("production ConfigMap = %v, want the base's keys with CHUNKSTREAM_REPLICAS=3", cm.Data)
	}
	so := find[*ScaledObject](t, prod, dir, "ScaledObject", "chunkstream-worker")
	if *so.Spec.MinReplicaCount != 2 || *so.Spec.MaxReplicaCount != 30 || len(so.Spec.Triggers) != 1 {
		t.Errorf("production ScaledObject min/max/triggers = %d/%d/%d, want 2/30/1", *so.Spec.MinReplicaCount, *so.Spec.MaxReplicaCount, len(so.Spec.Triggers))
	}
	j := find[*batchv1.Job](t, prod, dir, "Job", "chunkstream-bootstrap")
	jm := j.Spec.Template.Spec.Containers[0].VolumeMounts
	if !slices.ContainsFunc(jm, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/chunkstream/nats-tls" }) ||
		!slices.ContainsFunc(jm, func(m corev1.VolumeMount) bool { return m.MountPath == "/scripts" }) {
		t.Errorf("production bootstrap Job mounts %v, want /scripts and the NATS TLS files", jm)
	}
	if find[*monitoringv1.ServiceMonitor](t, prod, dir, "ServiceMonitor", "chunkstream-worker") == nil {
		t.Errorf("no ServiceMonitor in production")
	}
}
