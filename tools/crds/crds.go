// Package crds pins the modules whose published CustomResourceDefinition manifests the real tier
// installs (scripts/real/toolchain.ts lists the files): OpenShift's from github.com/openshift/api,
// OLM's from github.com/operator-framework/api. The imports keep `go mod tidy` from dropping the
// requirements; nothing here is built into a binary.
package crds

import (
	_ "github.com/openshift/api/config/v1"
	_ "github.com/operator-framework/api/crds"
)
