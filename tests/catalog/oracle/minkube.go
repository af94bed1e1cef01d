package main

// `oracle minkube <cases.json>`: a CSV's minKubeVersion as OLM judges it against an API server's
// version (operator-lifecycle-manager pkg/controller/operators/olm/requirements.go,
// minKubeVersionStatus, whose steps are restated here over the library it calls:
// github.com/coreos/go-semver v0.3.1, the version OLM's go.mod pins), go-semver's reading of
// each version string and its String(), and its order of every pair of them.

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/coreos/go-semver/semver"
)

type minKubeCases struct {
	Requirements [][2]string `json:"requirements"`
	Versions     []string    `json:"versions"`
}

type requirement struct {
	MinKubeVersion string `json:"minKubeVersion"`
	GitVersion     string `json:"gitVersion"`
	Met            bool   `json:"met"`
	Message        string `json:"message"`
}

type minKubeResult struct {
	Requirements []requirement     `json:"requirements"`
	Parse        map[string]string `json:"parse"`
	Strings      map[string]string `json:"strings"`
	Order        []string          `json:"order"`
}

// judge answers as minKubeVersionStatus does: met, and the status message (empty when none is written).
func judge(minKubeVersion, gitVersion string) (bool, string) {
	if minKubeVersion == "" {
		return true, ""
	}
	server, err := semver.NewVersion(strings.Split(strings.TrimPrefix(gitVersion, "v"), "-")[0])
	if err != nil {
		return false, "Server version parsing error"
	}
	wanted, err := semver.NewVersion(strings.TrimPrefix(minKubeVersion, "v"))
	if err != nil {
		return false, "CSV version parsing error"
	}
	if wanted.Compare(*server) > 0 {
		return false, fmt.Sprintf("CSV version requirement not met: minKubeVersion (%s) > server version (%s)", minKubeVersion, server.String())
	}
	return true, fmt.Sprintf("CSV minKubeVersion (%s) less than server version (%s)", minKubeVersion, gitVersion)
}

func minKube(file string) {
	data, err := os.ReadFile(file)
	check(err)
	var cases minKubeCases
	check(json.Unmarshal(data, &cases))
	result := minKubeResult{Parse: map[string]string{}, Strings: map[string]string{}}
	for _, c := range cases.Requirements {
		met, message := judge(c[0], c[1])
		result.Requirements = append(result.Requirements, requirement{c[0], c[1], met, message})
	}
	var parsed []*semver.Version
	var names []string
	for _, text := range cases.Versions {
		v, err := semver.NewVersion(text)
		if err != nil {
			result.Parse[text] = err.Error()
			continue
		}
		result.Parse[text] = ""
		result.Strings[text] = v.String()
		parsed = append(parsed, v)
		names = append(names, text)
	}
	for i := range parsed {
		for j := i + 1; j < len(parsed); j++ {
			result.Order = append(result.Order, fmt.Sprintf("%s %d %s", names[i], parsed[i].Compare(*parsed[j]), names[j]))
		}
	}
	out, err := json.MarshalIndent(result, "", " ")
	check(err)
	fmt.Println(string(out))
}
