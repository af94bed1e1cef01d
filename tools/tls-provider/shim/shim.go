// Package shim exposes the Terraform TLS provider's plugin-framework provider to the bridge.
package shim

import (
	"github.com/hashicorp/terraform-plugin-framework/provider"
	tls "github.com/hashicorp/terraform-provider-tls/internal/provider"
)

// Framework returns a fresh instance of the Terraform TLS provider.
func Framework() provider.Provider { return tls.New() }
