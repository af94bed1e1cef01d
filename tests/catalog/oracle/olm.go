package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// CSVFacts: what OLM reads of the CSV (V1alpha1CSVFromBundle: encoding/json into v1alpha1).
type CSVFacts struct {
	File       string `json:"file"`
	Name       string `json:"name"`
	TypedError string `json:"typedError,omitempty"`
	// InstallModes: the shapes InstallModeSet.Supports accepts, of AllNamespaces (no target),
	// OwnNamespace (the operator's), SingleNamespace (another) and MultiNamespace (two others).
	InstallModes    []string     `json:"installModes"`
	Deployments     []string     `json:"deployments"`
	ServiceAccounts []string     `json:"serviceAccounts"`
	OwnedCRDs       []OwnedCRD   `json:"ownedCRDs"`
	Permissions     []Permission `json:"permissions"`
	Webhooks        []string     `json:"webhooks"`
	APIServices     []string     `json:"apiServices"`
	MinKubeVersion  string       `json:"minKubeVersion,omitempty"`
	// NativeAPIs: spec.nativeAPIs as decoded, each as apimachinery prints a GroupVersionKind.
	NativeAPIs []string `json:"nativeAPIs,omitempty"`
}

type OwnedCRD struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// Permission: one CSV permission with its rules, as OLM grants them (namespaced or cluster-wide).
type Permission struct {
	ServiceAccount string              `json:"serviceAccount"`
	Cluster        bool                `json:"cluster"`
	Rules          []rbacv1.PolicyRule `json:"rules"`
}

// ObjectFacts: one bundle object and ExecutePlan's case for it (catalog/operator.go).
type ObjectFacts struct {
	File       string `json:"file"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	// Handling: "crd" (the step builder, catalog/step.go), "typed" (a core or RBAC case of
	// ExecutePlan's switch, decoded into that type), "supported" (supportedresources.go, created
	// through the dynamic client), "unsupported" (the InstallPlan fails).
	Handling   string `json:"handling"`
	TypedError string `json:"typedError,omitempty"`
	// Rules: a Role or ClusterRole's rules as decoded; Subjects and RoleRef a binding's.
	Rules    []rbacv1.PolicyRule `json:"rules,omitempty"`
	Subjects []rbacv1.Subject    `json:"subjects,omitempty"`
	RoleRef  *rbacv1.RoleRef     `json:"roleRef,omitempty"`
}

// Refusal: one reason OLM does not install the bundle, and the upstream source that decides it.
type Refusal struct {
	Rule   string `json:"rule"`
	Source string `json:"source"`
	File   string `json:"file,omitempty"`
	Detail string `json:"detail"`
}

// The kinds ExecutePlan's switch decodes into a type (catalog/operator.go), and
// supportedresources.go's supportedKinds.
var typedKinds = map[string]func() interface{}{
	"Secret":             func() interface{} { return &corev1.Secret{} },
	"ConfigMap":          func() interface{} { return &corev1.ConfigMap{} },
	"Service":            func() interface{} { return &corev1.Service{} },
	"ServiceAccount":     func() interface{} { return &corev1.ServiceAccount{} },
	"Role":               func() interface{} { return &rbacv1.Role{} },
	"RoleBinding":        func() interface{} { return &rbacv1.RoleBinding{} },
	"ClusterRole":        func() interface{} { return &rbacv1.ClusterRole{} },
	"ClusterRoleBinding": func() interface{} { return &rbacv1.ClusterRoleBinding{} },
}

var supportedKinds = map[string]bool{
	"PrometheusRule": true, "ServiceMonitor": true, "PodDisruptionBudget": true, "PriorityClass": true,
	"VerticalPodAutoscaler": true, "ConsoleYAMLSample": true, "ConsoleQuickStart": true,
	"ConsoleCLIDownload": true, "ConsoleLink": true, "ConsolePlugin": true, "NetworkPolicy": true,
}

func olmFacts(manifestsDir string, opm OpmResult) (*CSVFacts, []ObjectFacts, []Refusal) {
	refusals := []Refusal{}
	objects := []ObjectFacts{}
	if opm.Error != "" {
		refusals = append(refusals, Refusal{Rule: "bundle does not parse", Source: "operator-registry pkg/registry/parse.go (opm's bundle parser)", Detail: opm.Error})
	}
	var csvFacts *CSVFacts
	crdVersions := map[string]map[string]bool{} // CRD name -> served versions
	files, err := os.ReadDir(manifestsDir)
	check(err)
	for _, f := range files {
		if f.IsDir() || strings.HasPrefix(f.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(manifestsDir, f.Name()))
		check(err)
		object := &unstructured.Unstructured{}
		if err := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(data)), 30).Decode(object); err != nil || object.Object == nil {
			continue // opm leaves the file out (parse.go)
		}
		raw, err := object.MarshalJSON()
		check(err)
		kind := object.GetKind()
		switch {
		case kind == "ClusterServiceVersion":
			if csvFacts == nil {
				csvFacts = csvFactsOf(f.Name(), object, raw, &refusals)
			}
			continue
		case kind == "CustomResourceDefinition":
			objects = append(objects, ObjectFacts{File: f.Name(), APIVersion: object.GetAPIVersion(), Kind: kind, Name: object.GetName(), Handling: "crd"})
			if object.GetAPIVersion() != "apiextensions.k8s.io/v1" {
				refusals = append(refusals, Refusal{Rule: "CRD API not served", Source: "operator-lifecycle-manager catalog/step.go (NewCRDV1Beta1Step creates it through apiextensions.k8s.io/v1beta1, which Kubernetes no longer serves since 1.22)", File: f.Name(), Detail: object.GetAPIVersion()})
				continue
			}
			crd := apiextensionsv1.CustomResourceDefinition{}
			if err := json.Unmarshal(raw, &crd); err != nil {
				refusals = append(refusals, Refusal{Rule: "CRD does not decode", Source: "operator-lifecycle-manager pkg/lib/crd (UnmarshalV1)", File: f.Name(), Detail: err.Error()})
				continue
			}
			served := map[string]bool{}
			for _, v := range crd.Spec.Versions {
				served[v.Name] = v.Served
			}
			crdVersions[crd.Name] = served
			continue
		}
		facts := ObjectFacts{File: f.Name(), APIVersion: object.GetAPIVersion(), Kind: kind, Name: object.GetName()}
		if make, ok := typedKinds[kind]; ok {
			facts.Handling = "typed"
			typed := make()
			if err := json.Unmarshal(raw, typed); err != nil {
				facts.TypedError = err.Error()
				refusals = append(refusals, Refusal{Rule: "bundle object does not decode into its type", Source: "operator-lifecycle-manager catalog/operator.go (ExecutePlan: error parsing step manifest)", File: f.Name(), Detail: err.Error()})
			} else {
				switch v := typed.(type) {
				case *corev1.Service:
					if len(v.Spec.Ports) == 0 && v.Spec.ClusterIP != corev1.ClusterIPNone && v.Spec.Type != corev1.ServiceTypeExternalName {
						refusals = append(refusals, Refusal{Rule: "Service without ports", Source: "kubernetes pkg/apis/core/validation/validation.go (ValidateService: spec.ports Required unless headless; ExecutePlan creates every kind Service as a core Service)", File: f.Name(), Detail: "spec.ports: Required value"})
					}
				case *rbacv1.Role:
					facts.Rules = v.Rules
				case *rbacv1.ClusterRole:
					facts.Rules = v.Rules
				case *rbacv1.RoleBinding:
					facts.Subjects, facts.RoleRef = v.Subjects, &v.RoleRef
				case *rbacv1.ClusterRoleBinding:
					facts.Subjects, facts.RoleRef = v.Subjects, &v.RoleRef
				}
			}
		} else if supportedKinds[kind] {
			facts.Handling = "supported"
		} else {
			facts.Handling = "unsupported"
			refusals = append(refusals, Refusal{Rule: "kind not installable from a bundle", Source: "operator-lifecycle-manager catalog/operator.go (ExecutePlan: StepStatusUnsupportedResource) and catalog/supportedresources.go", File: f.Name(), Detail: kind})
		}
		if object.GetName() == "" {
			refusals = append(refusals, Refusal{Rule: "object without a name", Source: "apimachinery pkg/api/validation (ValidateObjectMeta: metadata.name Required)", File: f.Name(), Detail: kind})
		}
		objects = append(objects, facts)
	}
	if csvFacts != nil && csvFacts.TypedError == "" {
		for _, owned := range csvFacts.OwnedCRDs {
			if served, ok := crdVersions[owned.Name]; ok && !served[owned.Version] {
				refusals = append(refusals, Refusal{Rule: "owned CRD version not served", Source: "operator-lifecycle-manager olm/requirements.go (requirementStatus: CRD version not served)", Detail: owned.Name + " " + owned.Version})
			}
		}
	}
	return csvFacts, objects, refusals
}

func csvFactsOf(file string, object *unstructured.Unstructured, raw []byte, refusals *[]Refusal) *CSVFacts {
	facts := &CSVFacts{File: file, Name: object.GetName(), InstallModes: []string{}, Deployments: []string{}, ServiceAccounts: []string{}, OwnedCRDs: []OwnedCRD{}, Permissions: []Permission{}, Webhooks: []string{}, APIServices: []string{}}
	if object.GetAPIVersion() == "" {
		*refusals = append(*refusals, Refusal{Rule: "CSV without apiVersion", Source: "operator-lifecycle-manager resolver/steps.go (NewStepResourceFromBundle)", File: file, Detail: "bundle CSV missing APIVersion"})
	}
	csv := v1alpha1.ClusterServiceVersion{}
	if err := json.Unmarshal(raw, &csv); err != nil {
		facts.TypedError = err.Error()
		*refusals = append(*refusals, Refusal{Rule: "CSV does not decode", Source: "operator-lifecycle-manager resolver/steps.go (V1alpha1CSVFromBundle)", File: file, Detail: err.Error()})
		return facts
	}
	facts.MinKubeVersion = csv.Spec.MinKubeVersion
	for _, native := range csv.Spec.NativeAPIs {
		facts.NativeAPIs = append(facts.NativeAPIs, native.String())
		if !currentClusterServes(native) {
			*refusals = append(*refusals, Refusal{Rule: "native API not served", Source: "operator-lifecycle-manager olm/requirements.go (requirementStatus and isGVKRegistered: Native API does not exist)", File: file, Detail: native.String()})
		}
	}
	set, err := v1alpha1.NewInstallModeSet(csv.Spec.InstallModes)
	if err != nil {
		*refusals = append(*refusals, Refusal{Rule: "install modes", Source: "operator-framework/api v1alpha1 NewInstallModeSet (OLM's operatorgroup.go)", File: file, Detail: err.Error()})
	} else {
		shapes := []struct {
			mode    string
			targets []string
		}{
			{"AllNamespaces", []string{""}},
			{"OwnNamespace", []string{"operator"}},
			{"SingleNamespace", []string{"target"}},
			{"MultiNamespace", []string{"target-a", "target-b"}},
		}
		for _, shape := range shapes {
			if set.Supports("operator", shape.targets) == nil {
				facts.InstallModes = append(facts.InstallModes, shape.mode)
			}
		}
	}
	for _, owned := range csv.Spec.CustomResourceDefinitions.Owned {
		facts.OwnedCRDs = append(facts.OwnedCRDs, OwnedCRD{Name: owned.Name, Version: owned.Version, Kind: owned.Kind})
	}
	for _, w := range csv.Spec.WebhookDefinitions {
		facts.Webhooks = append(facts.Webhooks, string(w.Type)+" "+w.GenerateName)
	}
	for _, a := range csv.GetOwnedAPIServiceDescriptions() {
		facts.APIServices = append(facts.APIServices, a.Version+"."+a.Group)
	}
	if csv.Spec.InstallStrategy.StrategyName != v1alpha1.InstallStrategyNameDeployment {
		*refusals = append(*refusals, Refusal{Rule: "install strategy", Source: "operator-lifecycle-manager pkg/controller/install/resolver.go (only the deployment strategy)", File: file, Detail: csv.Spec.InstallStrategy.StrategyName})
		return facts
	}
	spec := csv.Spec.InstallStrategy.StrategySpec
	accounts := map[string]bool{}
	for _, d := range spec.DeploymentSpecs {
		facts.Deployments = append(facts.Deployments, d.Name)
	}
	for _, p := range spec.Permissions {
		facts.Permissions = append(facts.Permissions, Permission{ServiceAccount: p.ServiceAccountName, Rules: p.Rules})
		accounts[p.ServiceAccountName] = true
	}
	for _, p := range spec.ClusterPermissions {
		facts.Permissions = append(facts.Permissions, Permission{ServiceAccount: p.ServiceAccountName, Cluster: true, Rules: p.Rules})
		accounts[p.ServiceAccountName] = true
	}
	for sa := range accounts {
		if sa != "default" {
			facts.ServiceAccounts = append(facts.ServiceAccounts, sa)
		}
	}
	sort.Strings(facts.ServiceAccounts)
	return facts
}

// The cluster the catalog is judged on, as its discovery lists it: the render's model of a current
// OpenShift cluster, read from the same two files (scripts/render/render.ts CURRENT_CLUSTER_KINDS):
// the real tier's kube-apiserver discovery and current-cluster-kinds.json. Paths are relative to
// this folder, where `go run .` runs.
const (
	discoveryTable     = "../../../components/shared/api-resources.table.json"
	currentClusterFile = "../../../scripts/render/current-cluster-kinds.json"
)

var servedKinds map[string]map[string]bool

func loadServedKinds() map[string]map[string]bool {
	served := map[string]map[string]bool{}
	add := func(groupVersion, kind string) {
		if served[groupVersion] == nil {
			served[groupVersion] = map[string]bool{}
		}
		served[groupVersion][kind] = true
	}
	var table struct {
		Discovered []struct{ Group, Version, Kind string } `json:"discovered"`
	}
	mustReadJSON(discoveryTable, &table)
	for _, r := range table.Discovered {
		add(metav1.GroupVersion{Group: r.Group, Version: r.Version}.String(), r.Kind)
	}
	var extra struct {
		Kinds map[string]map[string]json.RawMessage `json:"kinds"`
	}
	mustReadJSON(currentClusterFile, &extra)
	for groupVersion, kinds := range extra.Kinds {
		for kind := range kinds {
			add(groupVersion, kind)
		}
	}
	return served
}

func mustReadJSON(file string, into interface{}) {
	raw, err := os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(raw, into)
	}
	if err != nil {
		panic(fmt.Sprintf("cannot read %s (run the oracle from tests/catalog/oracle): %v", file, err))
	}
}

// currentClusterServes is isGVKRegistered against that cluster: discovery of the group version
// (`ServerResourcesForGroupVersion(gv.String())`, an error for an empty one) lists the kind.
func currentClusterServes(api metav1.GroupVersionKind) bool {
	if servedKinds == nil {
		servedKinds = loadServedKinds()
	}
	groupVersion := metav1.GroupVersion{Group: api.Group, Version: api.Version}.String()
	return groupVersion != "" && servedKinds[groupVersion][api.Kind]
}
