// Command pulumi-resource-tls serves the Terraform TLS provider through the Pulumi Terraform bridge.
//
// The pulumi-tls provider module (github.com/pulumi/pulumi-tls/provider/v5) is not served by the
// Go module proxy these machines reach, at any version: this main builds the same provider from
// the modules that are (the bridge, the Terraform TLS provider) with a ProviderInfo of its own.
// Facts it relies on, read in pulumi/pulumi-tls provider/resources.go (v5.5.1): every Terraform
// type tls_<x> maps into the single module "index" with standard tokens (tls:index/<x>:<X>),
// schema versions default to zero, and the bridge's accurate preview is on. Left out: upstream's
// PreStateUpgradeHook for SelfSignedCert, which only rewrites state written by provider versions
// before the plugin-framework port (v4), and its documentation edits (codegen only).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/terraform-provider-tls/shim"
	pftfbridge "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfbridge"
	pftfgen "github.com/pulumi/pulumi-terraform-bridge/v3/pkg/pf/tfgen"
	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge"
	"github.com/pulumi/pulumi-terraform-bridge/v3/pkg/tfbridge/tokens"
	"github.com/pulumi/pulumi/sdk/v3/go/common/diag"
	"github.com/pulumi/pulumi/sdk/v3/go/common/diag/colors"
)

// version is set at link time (-X main.version=…) to the @pulumi/tls release the program uses.
var version string

func providerInfo() tfbridge.ProviderInfo {
	info := tfbridge.ProviderInfo{
		P:                              pftfbridge.ShimProvider(shim.Framework()),
		Name:                           "tls",
		Version:                        version,
		GitHubOrg:                      "hashicorp",
		EnableZeroDefaultSchemaVersion: true,
		EnableAccurateBridgePreview:    true,
		// Filled by schema generation below: the renames and schema fixups the runtime reads.
		MetadataInfo: tfbridge.NewProviderMetadata([]byte("{}")),
	}
	info.MustComputeTokens(tokens.SingleModule("tls_", "index", tokens.MakeStandard("tls")))
	return info
}

// generate derives the package schema and the bridge metadata from the Terraform provider, as
// upstream's release build does with tfgen (pulumi-tls provider/cmd/pulumi-tfgen-tls), here at
// start-up: upstream's generated files are not in any module this build can fetch. Diagnostics
// go to stderr; stdout carries only the port the engine reads.
func generate(ctx context.Context, info tfbridge.ProviderInfo) ([]byte, error) {
	sink := diag.DefaultSink(io.Discard, os.Stderr, diag.FormatOptions{Color: colors.Never})
	generated, err := pftfgen.GenerateSchema(ctx, pftfgen.GenerateSchemaOptions{
		ProviderInfo:    info,
		DiagnosticsSink: sink,
		XInMemoryDocs:   true,
	})
	if err != nil {
		return nil, err
	}
	var spec map[string]any
	if err := json.Unmarshal(generated.ProviderMetadata.PackageSchema, &spec); err != nil {
		return nil, err
	}
	spec["version"] = version
	return json.Marshal(spec)
}

func main() {
	if version == "" {
		fmt.Fprintln(os.Stderr, "pulumi-resource-tls: built without -X main.version; the bridge cannot serve an unversioned provider")
		os.Exit(1)
	}
	ctx := context.Background()
	info := providerInfo()
	schema, err := generate(ctx, info)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-resource-tls: generating the schema: %v\n", err)
		os.Exit(1)
	}
	pftfbridge.Main(ctx, "tls", info, pftfbridge.ProviderMetadata{PackageSchema: schema})
}
