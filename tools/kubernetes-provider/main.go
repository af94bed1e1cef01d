// Command pulumi-resource-kubernetes serves the Kubernetes provider from its published Go module.
//
// Upstream's own main (pulumi-kubernetes provider/cmd/pulumi-resource-kubernetes/main.go) embeds
// schema-embed.json, a file generated at release time that the module zip does not carry, so it
// cannot be built from the module. provider.Serve (provider/pkg/provider/serve.go) is public: this
// main calls it with the schema and terraform mapping that the module does carry, copied beside
// this file by scripts/real/tools.ts (git-ignored) with the schema's version set to the build's.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed assets/schema.json
var schema []byte

//go:embed assets/terraform-mapping.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, schema, terraformMapping)
}
