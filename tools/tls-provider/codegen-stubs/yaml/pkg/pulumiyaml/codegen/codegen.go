// Package codegen stands in for pulumi-yaml's program generator: see ../../../../README.md.
package codegen

import (
	"errors"

	"github.com/hashicorp/hcl/v2"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
)

// GenerateProgram is not available in this build.
func GenerateProgram(*pcl.Program) (map[string][]byte, hcl.Diagnostics, error) {
	return nil, nil, errors.New("YAML program generation is not built into this provider")
}
