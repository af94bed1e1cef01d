package main

// `oracle csvnulls <cases.json>`: what OLM makes of a CSV with a field set to JSON null. Each case
// is the base CSV (read as YAML and converted with sigs.k8s.io/yaml, as opm reads bundle files)
// with one field path set to null, decoded with encoding/json into operator-framework/api's
// v1alpha1.ClusterServiceVersion as OLM's resolver decodes it (V1alpha1CSVFromBundle). The output is
// the decode error, or a view of the fields the program reads, nil and empty written alike (Go
// does not tell them apart either): tests/operator/csv-decoding.test.ts compares the program's own
// reading with it.

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	sigsyaml "sigs.k8s.io/yaml"
)

type csvNullCases struct {
	Base  string   `json:"base"`
	Paths []string `json:"paths"`
}

type csvPermissionView struct {
	ServiceAccount string `json:"serviceAccount"`
	Rules          int    `json:"rules"`
}

// csvView: the fields the program reads, each as Go holds it after decoding.
type csvView struct {
	Replaces           string              `json:"replaces"`
	Skips              []string            `json:"skips"`
	Version            string              `json:"version"`
	MinKubeVersion     string              `json:"minKubeVersion"`
	NativeAPIs         []string            `json:"nativeAPIs"`
	InstallModes       []string            `json:"installModes"`
	Annotations        map[string]string   `json:"annotations"`
	Deployments        []string            `json:"deployments"`
	Replicas           []string            `json:"replicas"`
	DeploymentLabels   []map[string]string `json:"deploymentLabels"`
	PodLabels          []map[string]string `json:"podLabels"`
	Permissions        []csvPermissionView `json:"permissions"`
	ClusterPermissions []csvPermissionView `json:"clusterPermissions"`
	OwnedCRDs          int                 `json:"ownedCRDs"`
	RequiredCRDs       int                 `json:"requiredCRDs"`
	OwnedAPIServices   int                 `json:"ownedAPIServices"`
	RequiredAPIs       int                 `json:"requiredAPIServices"`
	Webhooks           int                 `json:"webhooks"`
}

type csvNullResult struct {
	Path  string   `json:"path"`
	Error string   `json:"error,omitempty"`
	View  *csvView `json:"view,omitempty"`
}

func csvNulls(file string) {
	raw, err := os.ReadFile(file)
	check(err)
	var cases csvNullCases
	check(json.Unmarshal(raw, &cases))
	base, err := os.ReadFile(cases.Base)
	check(err)
	document, err := sigsyaml.YAMLToJSON(base)
	check(err)
	results := []csvNullResult{}
	for _, path := range append([]string{""}, cases.Paths...) {
		var object interface{}
		check(json.Unmarshal(document, &object))
		if path != "" {
			setNull(object, strings.Split(path, "."))
		}
		patched, err := json.Marshal(object)
		check(err)
		csv := v1alpha1.ClusterServiceVersion{}
		if err := json.Unmarshal(patched, &csv); err != nil {
			results = append(results, csvNullResult{Path: path, Error: err.Error()})
			continue
		}
		results = append(results, csvNullResult{Path: path, View: viewOf(&csv)})
	}
	out, err := json.MarshalIndent(results, "", "  ")
	check(err)
	os.Stdout.Write(append(out, '\n'))
}

// setNull sets the value at a dotted path (list indexes as numbers) to null.
func setNull(object interface{}, path []string) {
	for i, key := range path {
		last := i == len(path)-1
		switch node := object.(type) {
		case map[string]interface{}:
			if last {
				node[key] = nil
				return
			}
			object = node[key]
		case []interface{}:
			index, err := strconv.Atoi(key)
			check(err)
			if last {
				node[index] = nil
				return
			}
			object = node[index]
		default:
			panic("no such path: " + strings.Join(path, "."))
		}
	}
}

func viewOf(csv *v1alpha1.ClusterServiceVersion) *csvView {
	view := &csvView{
		Replaces:           csv.Spec.Replaces,
		Skips:              append([]string{}, csv.Spec.Skips...),
		Version:            csv.Spec.Version.String(),
		MinKubeVersion:     csv.Spec.MinKubeVersion,
		NativeAPIs:         []string{},
		InstallModes:       []string{},
		Annotations:        map[string]string{},
		Deployments:        []string{},
		Replicas:           []string{},
		OwnedCRDs:          len(csv.Spec.CustomResourceDefinitions.Owned),
		RequiredCRDs:       len(csv.Spec.CustomResourceDefinitions.Required),
		OwnedAPIServices:   len(csv.Spec.APIServiceDefinitions.Owned),
		RequiredAPIs:       len(csv.Spec.APIServiceDefinitions.Required),
		Webhooks:           len(csv.Spec.WebhookDefinitions),
		DeploymentLabels:   []map[string]string{},
		PodLabels:          []map[string]string{},
		Permissions:        []csvPermissionView{},
		ClusterPermissions: []csvPermissionView{},
	}
	for _, api := range csv.Spec.NativeAPIs {
		view.NativeAPIs = append(view.NativeAPIs, api.String())
	}
	for _, mode := range csv.Spec.InstallModes {
		view.InstallModes = append(view.InstallModes, string(mode.Type)+"="+strconv.FormatBool(mode.Supported))
	}
	for key, value := range csv.GetAnnotations() {
		view.Annotations[key] = value
	}
	if csv.Spec.InstallStrategy.StrategyName == v1alpha1.InstallStrategyNameDeployment {
		spec := csv.Spec.InstallStrategy.StrategySpec
		for _, d := range spec.DeploymentSpecs {
			view.Deployments = append(view.Deployments, d.Name)
			replicas := "unset"
			if d.Spec.Replicas != nil {
				replicas = strconv.Itoa(int(*d.Spec.Replicas))
			}
			view.Replicas = append(view.Replicas, replicas)
			view.DeploymentLabels = append(view.DeploymentLabels, nonNilMap(d.Label))
			view.PodLabels = append(view.PodLabels, nonNilMap(d.Spec.Template.Labels))
		}
		for _, p := range spec.Permissions {
			view.Permissions = append(view.Permissions, csvPermissionView{ServiceAccount: p.ServiceAccountName, Rules: len(p.Rules)})
		}
		for _, p := range spec.ClusterPermissions {
			view.ClusterPermissions = append(view.ClusterPermissions, csvPermissionView{ServiceAccount: p.ServiceAccountName, Rules: len(p.Rules)})
		}
	}
	return view
}

func nonNilMap[K comparable, V any](m map[K]V) map[K]V {
	out := map[K]V{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
