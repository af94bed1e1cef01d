// Package codegen stands in for pulumi-dotnet's C# code generator: see ../../README.md.
package codegen

import (
	"errors"

	"github.com/hashicorp/hcl/v2"
	"github.com/pulumi/pulumi/pkg/v3/codegen/pcl"
)

// CSharpPackageInfo is the `language.csharp` section of a package schema.
type CSharpPackageInfo struct {
	PackageReferences            map[string]string `json:"packageReferences,omitempty"`
	Namespaces                   map[string]string `json:"namespaces,omitempty"`
	Compatibility                string            `json:"compatibility,omitempty"`
	DictionaryConstructors       bool              `json:"dictionaryConstructors,omitempty"`
	ProjectReferences            []string          `json:"projectReferences,omitempty"`
	RootNamespace                string            `json:"rootNamespace,omitempty"`
	LiftSingleValueMethodReturns bool              `json:"liftSingleValueMethodReturns,omitempty"`
	RespectSchemaVersion         bool              `json:"respectSchemaVersion,omitempty"`
}

// CSharpPropertyInfo is a property's `language.csharp` section.
type CSharpPropertyInfo struct {
	Name string `json:"name,omitempty"`
}

// CSharpResourceInfo is a resource's `language.csharp` section.
type CSharpResourceInfo struct {
	Name string `json:"name,omitempty"`
}

// GenerateProgram is not available in this build.
func GenerateProgram(*pcl.Program) (map[string][]byte, hcl.Diagnostics, error) {
	return nil, nil, errors.New("C# program generation is not built into this provider")
}
