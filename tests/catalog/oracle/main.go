// Command oracle computes, with the Go libraries OLM and opm run, what they make of bundle
// manifests, so the tests compare the program with upstream code, never with itself:
//
//	go run . bundles <folder of <operator>/<version>/manifests/> > community-bundles.expected.json
//	go run . yaml yaml-cases.json > yaml-cases.expected.json
//
// (README.md in this folder says when to run them again.)
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/operator-registry/pkg/image"
	"github.com/operator-framework/operator-registry/pkg/registry"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) != 3 || (os.Args[1] != "bundles" && os.Args[1] != "yaml" && os.Args[1] != "minkube" && os.Args[1] != "csvnulls") {
		fmt.Fprintln(os.Stderr, "usage: oracle bundles <folder> | oracle yaml <cases.json> | oracle minkube <cases.json> | oracle csvnulls <cases.json>")
		os.Exit(2)
	}
	logrus.SetOutput(io.Discard)
	if os.Args[1] == "yaml" {
		yamlCases(os.Args[2])
		return
	}
	if os.Args[1] == "minkube" {
		minKube(os.Args[2])
		return
	}
	if os.Args[1] == "csvnulls" {
		csvNulls(os.Args[2])
		return
	}
	root := os.Args[2]
	table := Table{Files: map[string]FileResult{}, Bundles: map[string]BundleResult{}}
	operators, err := os.ReadDir(root)
	check(err)
	for _, operator := range operators {
		if !operator.IsDir() {
			continue
		}
		versions, err := os.ReadDir(filepath.Join(root, operator.Name()))
		check(err)
		for _, version := range versions {
			bundle := filepath.Join(operator.Name(), version.Name())
			manifestsDir := filepath.Join(root, bundle, "manifests")
			files, err := os.ReadDir(manifestsDir)
			check(err)
			for _, file := range files {
				if file.IsDir() {
					continue
				}
				data, err := os.ReadFile(filepath.Join(manifestsDir, file.Name()))
				check(err)
				table.Files[filepath.ToSlash(filepath.Join(bundle, "manifests", file.Name()))] = withoutValues(parseFile(data))
			}
			table.Bundles[filepath.ToSlash(bundle)] = judgeBundle(filepath.Join(root, bundle))
		}
	}
	writeTable(table)
}

// writeTable writes one file or bundle per line, keys sorted, so a change to the population shows
// as the lines it changes.
func writeTable(table Table) {
	var out bytes.Buffer
	section := func(name string, entries map[string]interface{}, last bool) {
		keys := make([]string, 0, len(entries))
		for k := range entries {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&out, "%q: {\n", name)
		for i, k := range keys {
			line, err := json.Marshal(entries[k])
			check(err)
			comma := ","
			if i == len(keys)-1 {
				comma = ""
			}
			fmt.Fprintf(&out, "%q: %s%s\n", k, line, comma)
		}
		if last {
			out.WriteString("}\n")
		} else {
			out.WriteString("},\n")
		}
	}
	files := map[string]interface{}{}
	for k, v := range table.Files {
		files[k] = v
	}
	bundles := map[string]interface{}{}
	for k, v := range table.Bundles {
		bundles[k] = v
	}
	out.WriteString("{\n")
	section("files", files, false)
	section("bundles", bundles, true)
	out.WriteString("}\n")
	_, err := os.Stdout.Write(out.Bytes())
	check(err)
}

// YAMLCase is one made-up manifest and what the Go tooling makes of it.
type YAMLCase struct {
	Name     string     `json:"name"`
	YAML     string     `json:"yaml"`
	Expected FileResult `json:"expected"`
}

func yamlCases(file string) {
	data, err := os.ReadFile(file)
	check(err)
	var cases []YAMLCase
	check(json.Unmarshal(data, &cases))
	for i := range cases {
		cases[i].Expected = parseFile([]byte(cases[i].YAML))
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", " ")
	out.SetEscapeHTML(false)
	check(out.Encode(cases))
}

// Table is the checked-in expectation.
type Table struct {
	Files   map[string]FileResult   `json:"files"`
	Bundles map[string]BundleResult `json:"bundles"`
}

// FileResult: what opm's decoder makes of a manifest file, and every YAML document as sigs.k8s.io/yaml reads it.
type FileResult struct {
	// Opm: the first document decoded as opm decodes a bundle file (operator-registry
	// pkg/registry/decode.go: k8s.io/apimachinery NewYAMLOrJSONDecoder(reader, 30) into an Unstructured).
	Opm Decoded `json:"opm"`
	// Documents: each document of the stream (apimachinery's YAML reader splits them), converted by
	// sigs.k8s.io/yaml YAMLToJSON, the conversion the decoder runs.
	Documents []Decoded `json:"documents"`
}

// Decoded is one parse: the error, or the SHA-256 of the value's canonical JSON (Go's
// encoding/json of the decoded value: map keys sorted, numbers as float64, HTML not escaped).
// Value is that JSON itself, for the made-up cases only (small enough to read in a review).
type Decoded struct {
	Error string `json:"error,omitempty"`
	// Empty: decoded without error into no object (a document that is only comments, or null);
	// opm adds no object for it (pkg/registry/parse.go: `if obj.Object != nil`).
	Empty  bool            `json:"empty,omitempty"`
	SHA256 string          `json:"sha256,omitempty"`
	Value  json.RawMessage `json:"value,omitempty"`
}

func parseFile(data []byte) FileResult {
	result := FileResult{Documents: []Decoded{}}
	object := &unstructured.Unstructured{}
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 30).Decode(object); err != nil {
		result.Opm.Error = err.Error()
	} else if object.Object == nil {
		result.Opm.Empty = true
	} else {
		result.Opm.SHA256, result.Opm.Value = canonical(object.Object)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		document, err := reader.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			result.Documents = append(result.Documents, Decoded{Error: err.Error()})
			break
		}
		converted, err := sigsyaml.YAMLToJSON(document)
		if err != nil {
			result.Documents = append(result.Documents, Decoded{Error: err.Error()})
			continue
		}
		var value interface{}
		if err := json.Unmarshal(converted, &value); err != nil {
			result.Documents = append(result.Documents, Decoded{Error: err.Error()})
			continue
		}
		hash, canonicalJSON := canonical(value)
		result.Documents = append(result.Documents, Decoded{SHA256: hash, Value: canonicalJSON})
	}
	return result
}

// withoutValues keeps the hashes only: the population's values are the bundles themselves.
func withoutValues(result FileResult) FileResult {
	result.Opm.Value = nil
	for i := range result.Documents {
		result.Documents[i].Value = nil
	}
	return result
}

// BundleResult: what opm and operator-framework/api say of the bundle.
type BundleResult struct {
	// Opm: operator-registry's bundle parser (opm render / the bundle unpacker):
	// registry.NewImageInput over the manifests with a generated metadata/annotations.yaml.
	Opm OpmResult `json:"opm"`
	// Validation: operator-framework/api validation.DefaultBundleValidators (CSV, CRD, bundle)
	// over manifests.GetBundleFromDir, the checks `operator-sdk bundle validate` runs when a bundle
	// is built; OLM does not run them when it installs one (see olm.go for what it does refuse).
	Validation ValidationResult `json:"validation"`
	// CSV: the bundle's CSV decoded as OLM's resolver decodes it (operator-framework/api types).
	CSV *CSVFacts `json:"csv,omitempty"`
	// Objects: every other object opm puts in the bundle, with how OLM's ExecutePlan creates it.
	Objects []ObjectFacts `json:"objects"`
	// Refusals: why OLM would not install the bundle, whatever the install mode (olm.go).
	Refusals []Refusal `json:"refusals"`
}

type OpmResult struct {
	Error   string      `json:"error,omitempty"`
	Objects []ObjectRef `json:"objects,omitempty"`
}

type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
}

type ValidationResult struct {
	LoadError string    `json:"loadError,omitempty"`
	Errors    []Finding `json:"errors"`
	Warnings  []Finding `json:"warnings"`
}

type Finding struct {
	Type   string `json:"type"`
	Field  string `json:"field,omitempty"`
	Value  string `json:"value,omitempty"`
	Detail string `json:"detail"`
}

func judgeBundle(dir string) BundleResult {
	var result BundleResult
	result.Opm = opmParse(dir)
	result.CSV, result.Objects, result.Refusals = olmFacts(filepath.Join(dir, "manifests"), result.Opm)
	bundle, err := manifests.GetBundleFromDir(filepath.Join(dir, "manifests"))
	result.Validation.Errors = []Finding{}
	result.Validation.Warnings = []Finding{}
	if err != nil {
		result.Validation.LoadError = err.Error()
	}
	if bundle == nil {
		return result
	}
	for _, manifest := range validation.DefaultBundleValidators.Validate(bundle) {
		for _, e := range manifest.Errors {
			result.Validation.Errors = append(result.Validation.Errors, finding(e.Type, e.Field, e.BadValue, e.Detail))
		}
		for _, w := range manifest.Warnings {
			result.Validation.Warnings = append(result.Validation.Warnings, finding(w.Type, w.Field, w.BadValue, w.Detail))
		}
	}
	return result
}

func finding(kind interface{}, field string, value interface{}, detail string) Finding {
	f := Finding{Type: fmt.Sprint(kind), Field: field, Detail: detail}
	if value != nil {
		f.Value = fmt.Sprint(value)
	}
	return f
}

// opmParse lays the bundle out as an image holds it (manifests/ and metadata/annotations.yaml) in a
// temporary folder and parses it with operator-registry, as opm does for a bundle image.
func opmParse(dir string) OpmResult {
	tmp, err := os.MkdirTemp("", "bundle-")
	check(err)
	defer os.RemoveAll(tmp)
	check(os.Symlink(filepath.Join(must(filepath.Abs(dir)), "manifests"), filepath.Join(tmp, "manifests")))
	check(os.Mkdir(filepath.Join(tmp, "metadata"), 0o755))
	annotations := "annotations:\n" +
		"  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n" +
		"  operators.operatorframework.io.bundle.manifests.v1: manifests/\n" +
		"  operators.operatorframework.io.bundle.metadata.v1: metadata/\n" +
		"  operators.operatorframework.io.bundle.package.v1: " + filepath.Base(filepath.Dir(dir)) + "\n" +
		"  operators.operatorframework.io.bundle.channels.v1: stable\n"
	check(os.WriteFile(filepath.Join(tmp, "metadata", "annotations.yaml"), []byte(annotations), 0o644))
	input, err := registry.NewImageInput(image.SimpleReference("bundle"), tmp)
	if err != nil {
		return OpmResult{Error: err.Error()}
	}
	refs := []ObjectRef{}
	for _, object := range input.Bundle.Objects {
		refs = append(refs, ObjectRef{APIVersion: object.GetAPIVersion(), Kind: object.GetKind(), Name: object.GetName()})
	}
	return OpmResult{Objects: refs}
}

func canonical(value interface{}) (string, json.RawMessage) {
	var buffer bytes.Buffer
	encoder := json.NewEncoder(&buffer)
	encoder.SetEscapeHTML(false)
	check(encoder.Encode(normalise(value)))
	text := bytes.TrimRight(buffer.Bytes(), "\n")
	sum := sha256.Sum256(text)
	return hex.EncodeToString(sum[:]), json.RawMessage(text)
}

// normalise turns every number into float64 (JavaScript's one number type), so the hash is of the
// value both languages can hold.
func normalise(value interface{}) interface{} {
	switch v := value.(type) {
	case map[string]interface{}:
		out := make(map[string]interface{}, len(v))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out[k] = normalise(v[k])
		}
		return out
	case []interface{}:
		out := make([]interface{}, len(v))
		for i := range v {
			out[i] = normalise(v[i])
		}
		return out
	case int64:
		return float64(v)
	case int:
		return float64(v)
	default:
		return v
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func must[T any](v T, err error) T {
	check(err)
	return v
}
